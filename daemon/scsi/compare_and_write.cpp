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
#include "emulation.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {


void finish_miscompare(command &cmd, uint64_t offset)
{
	cmd.finish_check_condition(
		sense_builder(MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY).information(offset));
}

} // namespace

command_task emulate_compare_and_write(command &cmd)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	const logical_unit &lu = cmd.lu();
	// NUMBER OF LOGICAL BLOCKS is byte 13 (bytes 10-12 are reserved); above
	// MAXIMUM COMPARE AND WRITE LENGTH (VPD 0xb0) it is an invalid field.
	const lba_fields f{.lba = get_be64(cdb, 2), .blocks = cdb[13], .length_byte = 13};
	if (!open_transfer(cmd, f, {.max_blocks = lu.config().max_compare_and_write_blocks,
				    .data = transfer_data::each_block_twice}))
		co_return;
	const uint64_t lba = f.lba;
	const uint32_t blocks = f.blocks;
	uint64_t bytes = uint64_t{blocks} * lu.block_size();
	bool fua = write_through(cmd, lu.write_cache_enabled());
	uint64_t offset = lba * lu.block_size();

	if (lu.caps().compare_and_write) {
		// Compare and write data as one contiguous copy: the backstore's
		// primitive takes two flat buffers, the data-out may be scattered.
		std::span<uint8_t> both = bounce_space(cmd, 2 * bytes);
		copy_from_iovs(cmd.data(), 0, both);
		buffer_io(cmd, block_op::compare_and_write, offset, both);
		cmd.io().length = bytes;  // iov holds compare and write data
		cmd.io().fua = fua;
		cmd.io().miscompare_offset = 0;
		int64_t result = co_await submitted(cmd);
		if (result == -EILSEQ) {
			finish_miscompare(cmd, cmd.io().miscompare_offset);
			co_return;
		}
		// -EOPNOTSUPP: not this one (rbd: only within one 512-byte
		// sector); the two-step path below, atomic inside this daemon.
		if (result != -EOPNOTSUPP) {
			finish_result(cmd, result, io_kind::write, lba);
			co_return;
		}
	}

	co_await lock_exclusive(cmd, lba, blocks);
	std::span<uint8_t> medium = bounce_space(cmd, bytes);
	buffer_io(cmd, block_op::read, offset, medium);
	int64_t result = co_await submitted(cmd);
	if (finish_if_failed(cmd, result, io_kind::read, lba))
		co_return;
	// INFORMATION: offset in the data-out buffer of the first byte that
	// differs from the medium (SBC-4 5.3).
	if (auto diff = first_difference(cmd.data(), 0, medium)) {
		release_lock(cmd);
		finish_miscompare(cmd, *diff);
		co_return;
	}
	data_io(cmd, block_op::write, offset, bytes, bytes);
	cmd.io().fua = fua;
	result = co_await submitted(cmd);
	finish_result(cmd, result, io_kind::write, lba);
}

} // namespace tcmud::scsi
