// SPDX-License-Identifier: GPL-2.0-or-later
// The hot path: READ and WRITE (6/10/12/16, SBC-4 5.15-5.19, 5.40-5.44) and
// SYNCHRONIZE CACHE (10/16). One backstore request each, straight between
// the backstore and the command's data buffer; a write takes the range lock
// shared, which costs two uncontended atomics unless a COMPARE AND WRITE is
// running; a read loads the atomic-write gate before and after (two plain
// loads) and takes the lock only around a WRITE ATOMIC (atomic_gate.h).
#include "emulation.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {


// Decodes and checks LBA, length and buffer. Returns false if the command
// is already finished (an error, or a zero-length transfer).
bool prepare_transfer(command &cmd)
{
	lba_fields f = decode_lba_fields(cmd.cdb());
	if (!open_transfer(cmd, f, {.max_blocks = cmd.lu().max_transfer_blocks()}))
		return false;
	cmd.work().lba = f.lba;
	cmd.work().blocks = f.blocks;
	return true;
}

void submit_read(command &cmd);

void read_locked(command &cmd, int64_t)
{
	submit_read(cmd);
}

void read_done(command &cmd, int64_t result)
{
	command::work_state &w = cmd.work();
	if (!w.locked && result >= 0 && cmd.lu().config().atomic_read_exclusion &&
	    !cmd.lu().atomic_writes().read_valid(w.cursor)) {
		// A WRITE ATOMIC started while this read ran and may have been
		// half written into it: read again, under the lock.
		take_write_lock(cmd, w.lba, w.blocks, read_locked);
		return;
	}
	release_lock(cmd);
	if (result < 0) {
		cmd.finish_io_error(result, io_kind::read, w.lba);
		return;
	}
	cmd.finish_good(w.blocks * cmd.lu().block_size());
}

void submit_read(command &cmd)
{
	// FUA on a read asks for the medium, not a cache: we keep no cache, so
	// every read already goes to the backstore.
	block_io &io = cmd.io();
	io.op = block_op::read;
	io.fua = false;
	io.offset = cmd.work().lba * cmd.lu().block_size();
	set_io_data(cmd, 0, cmd.work().blocks * cmd.lu().block_size());
	cmd.submit(read_done);
}

void write_done(command &cmd, int64_t result)
{
	release_lock(cmd);
	if (result < 0) {
		cmd.finish_io_error(result, io_kind::write, cmd.work().lba);
		return;
	}
	cmd.finish_good();
}

void write_locked(command &cmd, int64_t)
{
	const command::work_state &w = cmd.work();
	block_io &io = cmd.io();
	io.op = block_op::write;
	io.fua = w.fua;
	io.offset = w.lba * cmd.lu().block_size();
	set_io_data(cmd, 0, w.blocks * cmd.lu().block_size());
	cmd.submit(write_done);
}

// The fused path's completions: the common outcome, whole and in time,
// finished at once; anything else (false) goes to read_done/write_done.
// A result is the byte count or 0 (backstore.h); short is for the step.
bool whole(command &cmd, int64_t result)
{
	return result == 0 || static_cast<uint64_t>(result) == cmd.io().length;
}

bool read_fused_done(command &cmd, int64_t result)
{
	// As read_done: a WRITE ATOMIC that started meanwhile sends the read
	// round again, under the lock (the fallback does that).
	if (!whole(cmd, result) || !cmd.lu().atomic_writes().read_valid(cmd.work().cursor))
		return false;
	// The fused path set io().length to the whole transfer.
	cmd.finish_good(cmd.io().length);
	return true;
}

bool write_fused_done(command &cmd, int64_t result)
{
	if (!whole(cmd, result))
		return false;
	release_lock(cmd);
	cmd.finish_good();
	return true;
}

void flush_done(command &cmd, int64_t result)
{
	if (result < 0) {
		cmd.finish_io_error(result, io_kind::write, cmd.work().lba);
		return;
	}
	cmd.finish_good();
}

} // namespace

void emulate_read(command &cmd, int64_t)
{
	if (!prepare_transfer(cmd))
		return;
	// Not while a WRITE ATOMIC is in flight: then the range lock, shared,
	// keeps this read out of its range (atomic_gate.h). cursor holds the
	// gate's ticket until read_done checks it.
	command::work_state &w = cmd.work();
	if (!cmd.lu().atomic_writes().read_begin(&w.cursor) &&
	    cmd.lu().config().atomic_read_exclusion) {
		take_write_lock(cmd, w.lba, w.blocks, read_locked);
		return;
	}
	submit_read(cmd);
}

void emulate_write(command &cmd, int64_t)
{
	if (!prepare_transfer(cmd))
		return;
	cmd.work().fua = write_through(cmd, cmd.lu().write_cache_enabled());
	take_write_lock(cmd, cmd.work().lba, cmd.work().blocks, write_locked);
}

// The fused path for READ and WRITE (6/10/12/16), called by
// logical_unit::execute once the CDB passed the table's checks, instead of
// the step driver: one request from the CDB to the backstore and, on
// completion, straight to the answer. It takes only the common case: the
// transfer within MAXIMUM TRANSFER LENGTH and the capacity, not empty, and
// exactly the data buffer's size; a READ only while no WRITE ATOMIC is in
// flight. Anything else returns false having changed nothing, and the
// command goes the step way (emulate_read/emulate_write), which gives
// every error its sense. The semantics are the steps': FUA for every write
// when WCE=0, a write holds the range lock shared (so COMPARE AND WRITE,
// WRITE SAME, UNMAP, XCOPY stay atomic against it), a read checks the
// atomic-write gate before and after.
bool execute_read_write_fused(command &cmd, bool write)
{
	lba_fields f = decode_lba_fields(cmd.cdb());
	logical_unit &lu = cmd.lu();
	uint64_t capacity = lu.num_blocks();
	uint64_t bytes = uint64_t{f.blocks} * lu.block_size();
	if (f.blocks == 0 || f.blocks > lu.max_transfer_blocks() || f.lba > capacity ||
	    f.blocks > capacity - f.lba || cmd.data_bytes() != bytes)
		return false;
	command::work_state &w = cmd.work();
	if (!write && !lu.atomic_writes().read_begin(&w.cursor) && lu.config().atomic_read_exclusion)
		return false;
	w.lba = f.lba;
	w.blocks = f.blocks;
	block_io &io = cmd.io();
	io.offset = f.lba * lu.block_size();
	io.length = bytes;
	io.iov = cmd.data();
	if (!write) {
		io.op = block_op::read;
		io.fua = false;
		cmd.submit_fused(read_fused_done, read_done);
		return true;
	}
	w.fua = write_through(cmd, lu.write_cache_enabled());
	io.op = block_op::write;
	io.fua = w.fua;
	w.locked = true;
	if (!lu.ranges().lock_shared(cmd.range(), f.lba, f.blocks)) {
		// Parked behind a COMPARE AND WRITE: the step way from here.
		cmd.continue_on_resume(write_locked);
		return true;
	}
	cmd.submit_fused(write_fused_done, write_done);
	return true;
}

// SBC-4 5.29/5.30. NUMBER OF LOGICAL BLOCKS 0 means "to the last LBA". IMMED
// allows finishing before the flush; we always wait, which is also allowed.
void emulate_synchronize_cache(command &cmd, int64_t)
{
	lba_fields f = decode_lba_fields(cmd.cdb());
	// One read of the capacity: with two, a resize in between could make
	// "to the end" (0 blocks) underflow.
	uint64_t capacity = cmd.lu().num_blocks();
	if (!check_lba_range(cmd, f.lba, f.blocks, capacity))
		return;
	uint64_t blocks = f.blocks ? f.blocks : capacity - f.lba;
	cmd.work().lba = f.lba;
	block_io &io = cmd.io();
	io.op = block_op::flush;
	io.fua = false;
	io.offset = f.lba * cmd.lu().block_size();
	io.length = blocks * cmd.lu().block_size();
	io.iov = {};
	cmd.submit(flush_done);
}

} // namespace tcmud::scsi
