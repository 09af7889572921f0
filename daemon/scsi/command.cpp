// SPDX-License-Identifier: GPL-2.0-or-later
#include "command.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "iovec_buffer.h"

// The SCSI layer hands a backstore's io_engine through without using it
// (backstore.h only names the class), so it must not pull in liburing.
#ifdef LIB_URING_H
#error "daemon/scsi includes <liburing.h>: include tcmud/io_engine.h only where an engine is used"
#endif

namespace tcmud::scsi {

namespace {

// A granted range-lock entry hands its command back to the command's owner,
// which resumes it on its own queue thread.
void wake_owner(range_lock::entry &e)
{
	auto *cmd = static_cast<command *>(e.context);
	cmd->owner()->command_wake(*cmd);
}

} // namespace

command::command()
{
	io_.done = this;
	range_.context = this;
	range_.granted = wake_owner;
}

command::~command()
{
	// Only a command abandoned mid-flight (its device torn down) still
	// has a suspended emulation; its locals own nothing that outlives it.
	if (task_)
		task_.destroy();
}

void command::reset(std::span<const uint8_t> cdb, std::span<const iovec> data,
		    command_owner *owner)
{
	// Fixed-size moves instead of a library call: every command pays this.
	// Two overlapping 8-byte moves cover 8..16 bytes (READ/WRITE(10) and
	// (16), the usual ones).
	std::size_t n = std::min(cdb.size(), cdb_.size());
	cdb_length_ = n;
	if (n >= 8 && n <= 16) {
		std::memcpy(cdb_.data(), cdb.data(), 8);
		std::memcpy(cdb_.data() + n - 8, cdb.data() + n - 8, 8);
	} else {
		std::copy_n(cdb.begin(), n, cdb_.begin());
	}
	data_ = data;
	data_bytes_ = iov_total(data);
	owner_ = owner;
	status_ = SAM_STAT_GOOD;
	sense_length_ = 0;
	read_len_ = 0;
	next_ = nullptr;
	fused_ = nullptr;
	pending_ = driving_ = finished_ = false;
	work_ = {};
	io_.atomic = false;
}

void command::begin(logical_unit &lu, backstore_queue &queue, sense_format format)
{
	lu_ = &lu;
	queue_ = &queue;
	sense_format_ = format;
}

void command::finish_good(uint64_t read_len)
{
	assert(!finished_);
	status_ = SAM_STAT_GOOD;
	read_len_ = read_len;
	finished_ = true;
}

void command::finish_status(uint8_t status)
{
	assert(!finished_);
	status_ = status;
	finished_ = true;
}

void command::finish_check_condition(const sense_builder &sense)
{
	assert(!finished_);
	status_ = SAM_STAT_CHECK_CONDITION;
	sense_length_ = static_cast<uint8_t>(sense.build(sense_format_, sense_));
	read_len_ = 0;
	finished_ = true;
}

// EIO is a medium error (SBC-4 reports the first LBA in INFORMATION; the
// backstore cannot say which block failed, so the request's first LBA is
// the best we know). ETIMEDOUT, ENOTCONN and ESHUTDOWN come from networked
// backstores (see below). ENOSPC on a thin backing file is SBC-4's "space
// allocation failed write protect". Transient shortages ask the initiator to
// retry (BUSY); anything else is our fault: internal target failure.
void command::finish_io_error(int64_t error, io_kind kind, uint64_t lba)
{
	switch (-error) {
	case EIO:
		finish_check_condition(
			sense_builder(MEDIUM_ERROR, kind == io_kind::write
							    ? ASC_WRITE_ERROR
							    : ASC_UNRECOVERED_READ_ERROR)
				.information(lba));
		return;
	case ENOSPC:
	case EDQUOT:
		finish_check_condition(sense_builder(
			DATA_PROTECT, ASC_SPACE_ALLOCATION_FAILED_WRITE_PROTECT));
		return;
	case EROFS:
		// The backing file system went read-only (remounted after an
		// error), or a shared image is exclusively locked by another
		// gateway (rbd): the medium is write protected here, not broken,
		// and reads still work. Initiators fail it at once, no retries.
		finish_check_condition(sense_builder(DATA_PROTECT, ASC_WRITE_PROTECTED));
		return;
	case ETIMEDOUT:
		// A networked backstore gave up waiting (rbd's osd_op_timeout):
		// the outcome is unknown and may be transient. ABORTED COMMAND is
		// retried by initiators a bounded number of times, never forever.
		finish_check_condition(
			sense_builder(ABORTED_COMMAND, ASC_LOGICAL_UNIT_COMMUNICATION_TIMEOUT));
		return;
	case ENOTCONN:
		// A networked backstore is reconnecting by itself (rbd: a fresh
		// Ceph client after this one was blocklisted). SPC's "in process
		// of becoming ready": Linux retries it after a delay, within the
		// command's time budget, so the initiator waits rather than
		// fails, and nothing was done.
		finish_check_condition(sense_builder(NOT_READY, ASC_LOGICAL_UNIT_BECOMING_READY));
		return;
	case ESHUTDOWN:
		// The backstore was fenced off its medium (a Ceph client that was
		// blocklisted after another gateway broke its lock, EBLOCKLISTED):
		// nothing goes through until an administrator reopens the device.
		finish_check_condition(
			sense_builder(NOT_READY, ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION));
		return;
	case EAGAIN:
	case EBUSY:
	case ENOMEM:
		finish_status(SAM_STAT_BUSY);
		return;
	default:
		finish_check_condition(sense_builder(HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		return;
	}
}

void command::submit(step_fn next)
{
	submit_to(*queue_, next);
}

void command::submit_to(backstore_queue &queue, step_fn next)
{
	next_ = next;
	queue.submit(io_);
}

void command::submit_fused(fused_fn done, step_fn fallback)
{
	fused_ = done;
	next_ = fallback;
	// A synchronous backstore completes inside submit(): only recorded
	// then (io_done sees driving_), and the fallback step runs below.
	driving_ = true;
	queue_->submit(io_);
	driving_ = false;
	if (pending_)
		drive();
}

void command::continue_when(bool ready, step_fn next)
{
	next_ = next;
	if (ready) {
		pending_result_ = 0;
		pending_ = true;
	}
}

void command::run(step_fn first)
{
	next_ = first;
	pending_result_ = 0;
	pending_ = true;
	drive();
}

void command::resume(backstore_queue &queue)
{
	queue_ = &queue;
	io_done(0);
}

void command::io_done(int64_t result)
{
	// The fused path: one request, and its result finishes the command
	// here; command_done() is still the very last thing done with it.
	if (fused_fn done = fused_) {
		fused_ = nullptr;
		if (!driving_ && done(*this, result)) {
			next_ = nullptr;
			finished_ = false;
			owner_->command_done(*this);
			return;
		}
	}
	pending_result_ = result;
	pending_ = true;
	if (!driving_)
		drive();
}

// Completions may arrive inside submit() (a synchronous backstore) or later
// from the queue's event loop. Running the next step from inside submit()
// would nest one stack frame per request (WRITE SAME, UNMAP loop), so a
// completion that arrives while a step runs is only recorded and the loop
// here picks it up. command_done() is the very last thing done with the
// object, because the owner may reuse the slot from inside it.
void command::drive()
{
	driving_ = true;
	while (pending_) {
		pending_ = false;
		// A read or write completes whole or with -errno: the backstore
		// resumes its own short transfers (backstore.h). A short
		// count that arrives anyway is an error, never GOOD with data
		// missing. Only a positive result can be short.
		if (pending_result_ > 0 && next_ && short_transfer(pending_result_))
			pending_result_ = -EIO;
		step_fn step = next_;
		next_ = nullptr;
		step(*this, pending_result_);
		if (!pending_ && !finished_ && !next_) {
			// A step that neither waits nor finishes is a bug in
			// this layer; fail the command rather than hang it.
			assert(false && "scsi step left the command hanging");
			finish_check_condition(sense_builder(HARDWARE_ERROR,
							     ASC_INTERNAL_TARGET_FAILURE));
		}
	}
	driving_ = false;
	if (finished_) {
		finished_ = false;
		owner_->command_done(*this);
	}
}

bool command::short_transfer(int64_t result) const
{
	return (io_.op == block_op::read || io_.op == block_op::write) &&
	       static_cast<uint64_t>(result) < io_.length;
}

} // namespace tcmud::scsi
