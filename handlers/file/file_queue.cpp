// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/file_queue.h"

#include <linux/falloc.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <new>
#include <type_traits>

#include "file/atomic_write_probe.h"
#include "log/log.h"

namespace tcmud {
namespace {

// One SQE moves at most this many iovecs (the kernel refuses more) and a
// single buffer at most 1 GiB (the kernel caps one transfer near 2 GiB);
// the rest follows as a resumed short transfer.
constexpr size_t max_iov_per_sqe = IOV_MAX;
constexpr uint64_t max_single_len = 1ull << 30;
// READ and WRITE sit at the same distance from their _FIXED forms.
constexpr unsigned plain_to_fixed_op = IORING_OP_READ - IORING_OP_READ_FIXED;
static_assert(IORING_OP_WRITE - IORING_OP_WRITE_FIXED == plain_to_fixed_op);

} // namespace

// The per-request state a backstore needs beyond block_io, built in the
// request's own block_io::backstore_state; its address is the io_uring
// user_data.
struct file_queue::request final : io_completion {
	file_queue *queue = nullptr;
	block_io *io = nullptr;
	int64_t early_result = 0; // != 0: finish with this (sent via a NOP)
	bool has_early_result = false;
	// A FUA discard or write-zeroes: the fallocate is done and the
	// fdatasync that makes it durable is (being) submitted.
	bool syncing = false;
	request *next_parked = nullptr;
	// Where a resumed transfer stands in io->iov: the first iovec not
	// wholly done, and the bytes before it. Resumes walk on from here,
	// not from the start (a request of many small iovecs, short again
	// and again, was quadratic).
	size_t iov_first = 0;
	uint64_t iov_before = 0;

	void io_done(int64_t result) override { queue->on_result(this, result); }
};

file_queue::file_queue(io_engine &engine, int fd, const std::atomic<uint64_t> &size,
		       backstore_caps caps, std::string log_prefix)
	: engine_(engine), fd_(fd), sqe_fd_(fd), fixed_area_(engine.fixed_buffers()), size_(size),
	  caps_(caps), log_prefix_(std::move(log_prefix))
{
	waiter_.queue = this;
	// A fixed file saves an fd lookup per I/O; without one, plain fds work.
	if (auto fixed = engine_.register_file(fd_)) {
		fixed_index_ = *fixed;
		sqe_fd_ = fixed_index_;
		sqe_file_flags_ = IOSQE_FIXED_FILE;
	} else
		log_debug(log_prefix_, "%s; the queue uses the plain fd",
			  fixed.error().what().c_str());
}

file_queue::~file_queue()
{
	// The engine still holds pointers into this queue for anything in
	// flight or parked; the owner must drain first. Say so loudly if not.
	if (in_flight_ > 0)
		log_error(log_prefix_, "file queue destroyed with %zu requests unfinished",
			  in_flight_);
	if (fixed_index_ >= 0)
		engine_.unregister_file(fixed_index_);
}

void file_queue::set_result_filter(result_filter filter, void *ctx)
{
	filter_ = filter;
	filter_ctx_ = ctx;
}

file_queue::request *file_queue::acquire(block_io &io)
{
	static_assert(sizeof(request) <= sizeof(block_io::backstore_state) &&
		      alignof(request) <= alignof(block_io) &&
		      std::is_trivially_destructible_v<request>);
	in_flight_++;
	auto *req = ::new (static_cast<void *>(io.backstore_state)) request;
	req->queue = this;
	req->io = &io;
	return req;
}

int file_queue::validate(const block_io &io) const
{
	if (io.op == block_op::flush)
		return 0;
	uint64_t size = size_.load(std::memory_order_acquire);
	if (io.offset > size || io.length > size - io.offset)
		return -EINVAL;
	// Reads and writes, nearly every request, before the rarer ops.
	if (io.op == block_op::read || io.op == block_op::write) {
		uint64_t total = 0;
		for (const iovec &v : io.iov)
			total += v.iov_len;
		return total == io.length ? 0 : -EINVAL;
	}
	if (io.op == block_op::discard && !caps_.discard)
		return -EOPNOTSUPP;
	if (io.op == block_op::write_zeroes && !caps_.write_zeroes)
		return -EOPNOTSUPP;
	if (io.op == block_op::prefetch && (!caps_.prefetch || io.length > UINT32_MAX))
		return -EOPNOTSUPP;
	if (io.op == block_op::compare_and_write)  // caps never offer it
		return -EOPNOTSUPP;
	return 0;
}

void file_queue::submit(block_io &io)
{
	io.progress = 0;
	request *req = acquire(io);
	// Even a request refused here completes through the io_uring, so the
	// caller is never called back from inside its own submit().
	int err = validate(io);
	const bool rw = io.op == block_op::read || io.op == block_op::write;
	if (err || (rw && io.length == 0)) {
		req->has_early_result = true;
		req->early_result = err;
	}
	if (park_head_) {
		park(req); // keep order behind requests already waiting
		return;
	}
	if (!rw || req->has_early_result) {
		start(req);
		return;
	}
	// A read or write that passed validate(), nothing parked: straight to
	// its SQE, without start()'s and prepare()'s look at the other ops.
	// prepare_rw() writes every field of it.
	io_uring_sqe *sqe = engine_.get_sqe_uncleared(req);
	if (!sqe) {
		park(req);
		return;
	}
	prepare_rw(req, sqe);
}

// SEEK_DATA/SEEK_HOLE on the file: a hole is deallocated, data (or
// preallocated space) is mapped. A block device or a file system without
// the two whences reports everything mapped. lseek moves the shared file
// position, which no request uses (all I/O is positional).
int file_queue::allocation(uint64_t offset, uint64_t length, allocation_run *out)
{
	*out = {.mapped = true, .length = length};
	off_t data = lseek(fd_, static_cast<off_t>(offset), SEEK_DATA);
	if (data < 0) {
		if (errno == ENXIO) {  // only a hole from here to the end
			*out = {.mapped = false, .length = length};
			return 0;
		}
		return errno == EINVAL ? 0 : -errno;
	}
	if (static_cast<uint64_t>(data) > offset) {
		*out = {.mapped = false,
			.length = std::min<uint64_t>(length, uint64_t(data) - offset)};
		return 0;
	}
	off_t hole = lseek(fd_, static_cast<off_t>(offset), SEEK_HOLE);
	if (hole < 0)
		return errno == EINVAL ? 0 : -errno;
	if (static_cast<uint64_t>(hole) > offset)
		out->length = std::min<uint64_t>(length, uint64_t(hole) - offset);
	return 0;
}

void file_queue::start(request *req)
{
	io_uring_sqe *sqe = engine_.get_sqe(req);
	if (!sqe) {
		park(req);
		return;
	}
	prepare(req, sqe);
}

// Fills the SQE, through the fixed file where the queue has one.
void file_queue::prepare(request *req, io_uring_sqe *sqe)
{
	block_io &io = *req->io;
	if (req->has_early_result) {
		io_uring_prep_nop(sqe);
		return;
	}
	if (req->syncing) {
		io_uring_prep_fsync(sqe, sqe_fd_, IORING_FSYNC_DATASYNC);
		sqe->flags = sqe_file_flags_;
		return;
	}
	const auto off = static_cast<off_t>(io.offset);
	const auto len = static_cast<off_t>(io.length);
	switch (io.op) {
	case block_op::read:
	case block_op::write:
		prepare_rw(req, sqe);
		return;
	case block_op::flush:
		io_uring_prep_fsync(sqe, sqe_fd_, IORING_FSYNC_DATASYNC);
		break;
	case block_op::discard:
		io_uring_prep_fallocate(sqe, sqe_fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					off, len);
		break;
	case block_op::write_zeroes:
		io_uring_prep_fallocate(sqe, sqe_fd_, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					off, len);
		break;
	case block_op::prefetch:
		io_uring_prep_fadvise(sqe, sqe_fd_, io.offset, static_cast<uint32_t>(io.length),
				      POSIX_FADV_WILLNEED);
		break;
	case block_op::compare_and_write:  // refused by validate()
		io_uring_prep_nop(sqe);
		return;
	}
	sqe->flags = sqe_file_flags_;
}

void file_queue::prepare_rw(request *req, io_uring_sqe *sqe)
{
	block_io &io = *req->io;
	// Nothing done yet is the common case: the caller's own array.
	std::span<const iovec> iov =
		io.progress == 0 ? io.iov.first(std::min(io.iov.size(), max_iov_per_sqe))
				 : remaining_iov(req);
	const uint64_t off = io.offset + io.progress;
	const bool is_read = io.op == block_op::read;
	if (iov.size() == 1) {
		// Nearly every command: one iovec, inline.
		const uint64_t len = std::min<uint64_t>(iov[0].iov_len, max_single_len);
		if (is_read)
			io_uring_prep_read(sqe, sqe_fd_, iov[0].iov_base, static_cast<unsigned>(len), off);
		else
			io_uring_prep_write(sqe, sqe_fd_, iov[0].iov_base, static_cast<unsigned>(len), off);
		if (fixed_area_.size)
			use_fixed_buffer(reinterpret_cast<uintptr_t>(iov[0].iov_base), len, sqe);
	} else if (!fixed_area_.size || !prepare_fixed(iov, off, is_read, sqe)) {
		auto n = static_cast<unsigned>(iov.size());
		if (is_read)
			io_uring_prep_readv(sqe, sqe_fd_, iov.data(), n, off);
		else
			io_uring_prep_writev(sqe, sqe_fd_, iov.data(), n, off);
	}
	sqe->flags = sqe_file_flags_;
	// Every piece of a FUA write is durable before it completes, resumed
	// pieces included.
	if (!is_read && io.fua)
		sqe->rw_flags = RWF_DSYNC;
	if (!is_read && io.atomic)
		sqe->rw_flags |= rwf_atomic;
	if (async_threshold_ && io.length - io.progress >= async_threshold_)
		sqe->flags |= IOSQE_ASYNC;
}

// A READ or WRITE SQE already prepared for [addr, addr + len) becomes
// READ_FIXED or WRITE_FIXED if that range lies inside the registered area:
// the same fields but the opcode and buf_index, so the plain prep is not
// repeated (~13 instructions a command less than preparing again).
void file_queue::use_fixed_buffer(uintptr_t addr, uint64_t len, io_uring_sqe *sqe)
{
	// Unsigned: an address below the area wraps to a huge offset.
	const uintptr_t rel = addr - fixed_area_.base;
	if (rel >= fixed_area_.size || len > fixed_area_.size - rel)
		return;
	// An area of one buffer (a data area up to 1 GiB) needs no cut and
	// has index 0, which the plain prep already wrote.
	if (fixed_area_.size > (uint64_t{1} << fixed_buffer_shift)) [[unlikely]] {
		int index = 0;
		sqe->len = static_cast<unsigned>(fixed_buffer_slice(fixed_area_, addr, len, &index));
		sqe->buf_index = static_cast<uint16_t>(index);
	}
	sqe->opcode = static_cast<uint8_t>(sqe->opcode - plain_to_fixed_op);
	fixed_buffer_sqes_++;
}

// READ_FIXED/WRITE_FIXED for several iovecs if they are one contiguous
// range (adjacent iovecs are merged) inside the registered area; false (SQE untouched) for
// anything else, which then goes as before. A range that crosses from one
// 1 GiB buffer into the next is cut at the boundary: the rest follows as a
// short transfer, resumed like any other (on_result).
bool file_queue::prepare_fixed(std::span<const iovec> iov, uint64_t off, bool is_read,
			       io_uring_sqe *sqe)
{
	const auto start = reinterpret_cast<uintptr_t>(iov[0].iov_base);
	uint64_t len = iov[0].iov_len;
	for (size_t i = 1; i < iov.size(); i++) {
		if (reinterpret_cast<uintptr_t>(iov[i].iov_base) != start + len)
			return false;
		len += iov[i].iov_len;
	}
	int index = 0;
	const auto n = static_cast<unsigned>(fixed_buffer_slice(fixed_area_, start, len, &index));
	if (n == 0)
		return false;
	if (is_read)
		io_uring_prep_read_fixed(sqe, sqe_fd_, iov[0].iov_base, n, off, index);
	else
		io_uring_prep_write_fixed(sqe, sqe_fd_, iov[0].iov_base, n, off, index);
	fixed_buffer_sqes_++;
	return true;
}

// The caller's iovecs past what is already done (progress > 0), at most one
// SQE's worth: the caller's own array when the transfer stopped on an iovec
// boundary, else a copy in scratch_iov with its first iovec trimmed; that
// capacity survives slot reuse.
std::span<const iovec> file_queue::remaining_iov(request *req)
{
	block_io &io = *req->io;
	// progress only grows within a request; the cursor follows it.
	while (req->iov_first < io.iov.size() &&
	       io.progress - req->iov_before >= io.iov[req->iov_first].iov_len)
		req->iov_before += io.iov[req->iov_first++].iov_len;
	uint64_t skip = io.progress - req->iov_before;
	size_t first = req->iov_first;
	size_t n = std::min(io.iov.size() - first, max_iov_per_sqe);
	if (skip == 0)
		return std::span<const iovec>(io.iov).subspan(first, n);
	io.scratch_iov.assign(io.iov.begin() + static_cast<ptrdiff_t>(first),
			      io.iov.begin() + static_cast<ptrdiff_t>(first + n));
	if (!io.scratch_iov.empty()) {
		io.scratch_iov[0].iov_base = static_cast<char *>(io.scratch_iov[0].iov_base) + skip;
		io.scratch_iov[0].iov_len -= skip;
	}
	return io.scratch_iov;
}

void file_queue::park(request *req)
{
	req->next_parked = nullptr;
	if (park_tail_)
		park_tail_->next_parked = req;
	else
		park_head_ = req;
	park_tail_ = req;
	parked_count_++;
	if (!waiting_for_sqe_) {
		waiting_for_sqe_ = true;
		engine_.wait_for_sqe(&waiter_);
	}
}

void file_queue::restart_parked()
{
	waiting_for_sqe_ = false;
	request *req = park_head_;
	park_head_ = park_tail_ = nullptr;
	parked_count_ = 0;
	while (req) {
		request *next = req->next_parked;
		if (park_head_)
			park(req); // the SQ filled up again: keep the order
		else
			start(req);
		req = next;
	}
}

void file_queue::complete(request *req, int64_t result)
{
	io_completion *done = req->io->done;
	// Nothing of req after this: the callback may submit the same
	// block_io again, which builds a new request over it.
	in_flight_--;
	done->io_done(result);
}

void file_queue::on_result(request *req, int64_t result)
{
	if (filter_)
		result = filter_(filter_ctx_, *req->io, result);
	if (req->has_early_result) {
		complete(req, req->early_result);
		return;
	}
	if (result < 0) {
		complete(req, result);
		return;
	}
	block_io &io = *req->io;
	if (io.op != block_op::read && io.op != block_op::write) {
		// fallocate has no RWF_DSYNC: a FUA deallocation or zeroing is
		// durable only after an fdatasync of its own (the metadata change
		// is what must survive a crash; with the write cache off, GOOD
		// must not come before it).
		if (io.fua && !req->syncing &&
		    (io.op == block_op::discard || io.op == block_op::write_zeroes)) {
			req->syncing = true;
			start(req);
			return;
		}
		complete(req, 0);
		return;
	}
	int64_t outcome = check_rw_progress(req, result);
	if (outcome > 0)
		start(req); // short transfer: resume from io.progress
	else
		complete(req, outcome < 0 ? outcome : static_cast<int64_t>(io.length));
}

// Adds a successful transfer to the progress. Returns 1 if more remains,
// 0 when done, or -EIO when the file gave nothing (end of file).
int64_t file_queue::check_rw_progress(request *req, int64_t result)
{
	block_io &io = *req->io;
	const uint64_t remaining = io.length - io.progress;
	if (result == 0) {
		// Once per queue: a truncated file would otherwise log per I/O.
		if (!logged_early_end_)
			log_error(log_prefix_, "%s at offset %" PRIu64 " stopped after %" PRIu64
				  " of %" PRIu64 " bytes: the backing file ends early"
				  " (further cases on this queue are not logged)",
				  io.op == block_op::read ? "read" : "write", io.offset,
				  io.progress, io.length);
		logged_early_end_ = true;
		return -EIO;
	}
	io.progress += std::min(static_cast<uint64_t>(result), remaining);
	return io.progress < io.length ? 1 : 0;
}

} // namespace tcmud
