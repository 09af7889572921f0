// SPDX-License-Identifier: GPL-2.0-or-later
// The hot path: READ and WRITE (6/10/12/16, SBC-4 5.15-5.19, 5.40-5.44) and
// SYNCHRONIZE CACHE (10/16). One backstore request each, straight between
// the backstore and the command's data buffer; a write takes the range lock
// shared, which costs two uncontended atomics unless a COMPARE AND WRITE is
// running.
#include "handlers.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

constexpr uint8_t FUA_BIT = 0x08;  // byte 1 of the 10/12/16-byte CDBs

// Decodes and checks LBA, length and buffer. Returns false if the command
// is already finished (an error, or a zero-length transfer).
bool prepare_transfer(command &cmd)
{
	lba_fields f = decode_lba_fields(cmd.cdb());
	if (!check_transfer_length(cmd, f) || !check_lba_range(cmd, f.lba, f.blocks))
		return false;
	uint64_t bytes = uint64_t{f.blocks} * cmd.lu().block_size();
	// SBC-4: a transfer length of zero is not an error; nothing moves.
	if (bytes == 0) {
		cmd.finish_good();
		return false;
	}
	if (!check_data_length(cmd, bytes))
		return false;
	cmd.work().lba = f.lba;
	cmd.work().blocks = f.blocks;
	return true;
}

void read_done(command &cmd, int64_t result)
{
	if (result < 0) {
		cmd.finish_io_error(result, false, cmd.work().lba);
		return;
	}
	cmd.finish_good(cmd.work().blocks * cmd.lu().block_size());
}

void write_done(command &cmd, int64_t result)
{
	release_lock(cmd);
	if (result < 0) {
		cmd.finish_io_error(result, true, cmd.work().lba);
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

void flush_done(command &cmd, int64_t result)
{
	if (result < 0) {
		cmd.finish_io_error(result, true, cmd.work().lba);
		return;
	}
	cmd.finish_good();
}

} // namespace

void handle_read(command &cmd, int64_t)
{
	if (!prepare_transfer(cmd))
		return;
	// FUA on a read asks for the medium, not a cache: we keep no cache, so
	// every read already goes to the backstore.
	block_io &io = cmd.io();
	io.op = block_op::read;
	io.fua = false;
	io.offset = cmd.work().lba * cmd.lu().block_size();
	set_io_data(cmd, 0, cmd.work().blocks * cmd.lu().block_size());
	cmd.submit(read_done);
}

void handle_write(command &cmd, int64_t)
{
	if (!prepare_transfer(cmd))
		return;
	std::span<const uint8_t> cdb = cmd.cdb();
	// WRITE(6) has no FUA bit. With the write cache off every write is
	// forced unit access (SBC-4: WCE = 0 means GOOD only once on medium).
	bool fua = cdb[0] != WRITE_6 && (cdb[1] & FUA_BIT);
	cmd.work().fua = fua || !cmd.lu().write_cache_enabled();
	take_write_lock(cmd, cmd.work().lba, cmd.work().blocks, write_locked);
}

// SBC-4 5.29/5.30. NUMBER OF LOGICAL BLOCKS 0 means "to the last LBA". IMMED
// allows finishing before the flush; we always wait, which is also allowed.
void handle_synchronize_cache(command &cmd, int64_t)
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
