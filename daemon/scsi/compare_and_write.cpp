// SPDX-License-Identifier: GPL-2.0-or-later
// COMPARE AND WRITE (SBC-4 5.3): read N blocks, compare them with the first
// half of the data-out buffer, and only if equal write the second half.
//
// Atomicity: the command holds its LBA range exclusively in the logical
// unit's range lock from before the read until after the write completes.
// Every other write (WRITE, WRITE AND VERIFY, WRITE SAME, UNMAP) takes its
// range shared, so none can land between our read and our write, on any
// queue thread; writes already in flight when we asked are drained first.
// Reads are not excluded: SBC-4 only requires that no other write intervene.
//
// A backstore that offers block_op::compare_and_write (caps) gets the whole
// command as one request instead, without the range lock: its own
// compare-and-write is atomic against every writer of the medium, other
// daemons and hosts included, which the range lock cannot be. A request
// the backstore refuses with -EOPNOTSUPP takes the range-lock path instead.
#include <cerrno>

#include "byte_order.h"
#include "handlers.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

constexpr uint8_t FUA_BIT = 0x08;

void written(command &cmd, int64_t result)
{
	release_lock(cmd);
	if (result < 0) {
		cmd.finish_io_error(result, true, cmd.work().lba);
		return;
	}
	cmd.finish_good();
}

void compared(command &cmd, int64_t result)
{
	const command::work_state &w = cmd.work();
	uint64_t bytes = w.blocks * cmd.lu().block_size();
	if (result < 0) {
		release_lock(cmd);
		cmd.finish_io_error(result, false, w.lba);
		return;
	}
	// INFORMATION: offset in the data-out buffer of the first byte that
	// differs from the medium (SBC-4 5.3).
	auto diff = first_difference(cmd.data(), 0, std::span<const uint8_t>(cmd.bounce().data(), bytes));
	if (diff) {
		release_lock(cmd);
		cmd.finish_check_condition(
			sense_builder(MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY).information(*diff));
		return;
	}
	block_io &io = cmd.io();
	io.op = block_op::write;
	io.fua = w.fua;
	io.offset = w.lba * cmd.lu().block_size();
	set_io_data(cmd, bytes, bytes);
	cmd.submit(written);
}

void locked(command &cmd, int64_t)
{
	const command::work_state &w = cmd.work();
	uint64_t bytes = w.blocks * cmd.lu().block_size();
	bounce_buffer &bounce = cmd.bounce();
	if (bounce.size() < bytes)
		bounce.resize(bytes);
	cmd.scratch_iov().assign(1, iovec{bounce.data(), bytes});
	block_io &io = cmd.io();
	io.op = block_op::read;
	io.fua = false;
	io.offset = w.lba * cmd.lu().block_size();
	io.length = bytes;
	io.iov = cmd.scratch_iov();
	cmd.submit(compared);
}

void offloaded(command &cmd, int64_t result)
{
	const command::work_state &w = cmd.work();
	// Not this one (rbd: only within one 512-byte sector): the two-step
	// path, atomic inside this daemon only.
	if (result == -EOPNOTSUPP) {
		take_exclusive_lock(cmd, w.lba, w.blocks, locked);
		return;
	}
	if (result == -EILSEQ) {
		cmd.finish_check_condition(sense_builder(MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY)
						   .information(cmd.io().miscompare_offset));
		return;
	}
	if (result < 0) {
		cmd.finish_io_error(result, true, w.lba);
		return;
	}
	cmd.finish_good();
}

// Compare and write data as one contiguous copy (the backstore's atomic
// primitive takes two flat buffers; the data-out buffer may be scattered).
void offload(command &cmd)
{
	const command::work_state &w = cmd.work();
	uint64_t bytes = w.blocks * cmd.lu().block_size();
	bounce_buffer &bounce = cmd.bounce();
	if (bounce.size() < 2 * bytes)
		bounce.resize(2 * bytes);
	copy_from_iovs(cmd.data(), 0, std::span<uint8_t>(bounce.data(), 2 * bytes));
	cmd.scratch_iov().assign(1, iovec{bounce.data(), 2 * bytes});
	block_io &io = cmd.io();
	io.op = block_op::compare_and_write;
	io.fua = w.fua;
	io.offset = w.lba * cmd.lu().block_size();
	io.length = bytes;
	io.iov = cmd.scratch_iov();
	io.miscompare_offset = 0;
	cmd.submit(offloaded);
}

} // namespace

void handle_compare_and_write(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	const logical_unit &lu = cmd.lu();
	uint64_t lba = get_be64(cdb, 2);
	uint8_t blocks = cdb[13];
	// Above MAXIMUM COMPARE AND WRITE LENGTH (VPD 0xb0) is an invalid field.
	if (blocks > lu.config().max_compare_and_write_blocks) {
		finish_invalid_cdb(cmd, 13);
		return;
	}
	if (!check_lba_range(cmd, lba, blocks))
		return;
	// SBC-4: NUMBER OF LOGICAL BLOCKS 0 is not an error; nothing happens.
	if (blocks == 0) {
		cmd.finish_good();
		return;
	}
	if (!check_data_length(cmd, 2ull * blocks * lu.block_size()))
		return;
	command::work_state &w = cmd.work();
	w.lba = lba;
	w.blocks = blocks;
	w.fua = (cdb[1] & FUA_BIT) || !lu.write_cache_enabled();
	if (lu.caps().compare_and_write) {
		offload(cmd);
		return;
	}
	take_exclusive_lock(cmd, lba, blocks, locked);
}

} // namespace tcmud::scsi
