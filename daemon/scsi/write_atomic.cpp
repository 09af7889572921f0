// SPDX-License-Identifier: GPL-2.0-or-later
// WRITE ATOMIC(16) (SBC-4 5.48): the blocks are written all or none, and no
// other command sees part of them.
//
// Against other commands, on every backstore: the range is held exclusively
// from before the write until it completed (no other write of this logical
// unit, from any queue, lands inside it), and the atomic-write gate keeps
// READs out of it (atomic_gate.h). Across a crash: only where the backstore
// can write atomically (O_DIRECT with RWF_ATOMIC, statx STATX_WRITE_ATOMIC)
// and the write is one of its units: a power of two within its unit sizes,
// at an offset that is a multiple of the length. docs/scsi.md says which
// holds where.
#include <bit>

#include "byte_order.h"
#include "emulation.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {


// Whether the backstore's own atomic write covers this request.
bool backstore_atomic(const backstore_caps &caps, uint64_t offset, uint64_t bytes)
{
	return caps.atomic_write_unit_max != 0 && std::has_single_bit(bytes) &&
	       bytes >= caps.atomic_write_unit_min && bytes <= caps.atomic_write_unit_max &&
	       offset % bytes == 0;
}

} // namespace

// Order of checks as for every command (docs/scsi.md): the field values
// (ATOMIC BOUNDARY, alignment of the LBA, granularity of the length), then
// the length against MAXIMUM ATOMIC TRANSFER LENGTH, the LBA range, zero
// length, the data buffer.
command_task emulate_write_atomic(command &cmd)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	logical_unit &lu = cmd.lu();
	uint64_t lba = get_be64(cdb, 2);
	uint16_t boundary = get_be16(cdb, 10);
	uint32_t blocks = get_be16(cdb, 12);
	// MAXIMUM ATOMIC BOUNDARY SIZE is 0: no boundaries (SBC-4: a non-zero
	// ATOMIC BOUNDARY is then an invalid field).
	if (boundary != 0) {
		finish_invalid_cdb(cmd, 10);
		co_return;
	}
	uint32_t alignment = lu.config().atomic_alignment_blocks;
	if (alignment > 1 && lba % alignment != 0) {
		finish_invalid_cdb(cmd, 2);
		co_return;
	}
	uint32_t granularity = lu.config().atomic_granularity_blocks;
	if (granularity > 1 && blocks % granularity != 0) {
		finish_invalid_cdb(cmd, 12);
		co_return;
	}
	if (!open_transfer(cmd, {.lba = lba, .blocks = blocks, .length_byte = 12},
			   {.max_blocks = lu.max_atomic_transfer_blocks()}))
		co_return;
	uint64_t bytes = uint64_t{blocks} * lu.block_size();
	bool fua = write_through(cmd, lu.write_cache_enabled());

	// Announced before the range is taken and anything is written, so a
	// READ that starts from now on takes the lock, and one already running
	// reads again (atomic_gate.h).
	lu.atomic_writes().write_begin();
	co_await lock_exclusive(cmd, lba, blocks);
	uint64_t offset = lba * lu.block_size();
	bool atomic = backstore_atomic(lu.caps(), offset, bytes);
	data_io(cmd, block_op::write, offset, 0, bytes);
	if (atomic && cmd.io().iov.size() != 1) {
		// RWF_ATOMIC takes one buffer: gather the data-out pieces.
		std::span<uint8_t> gathered = bounce_space(cmd, bytes);
		copy_from_iovs(cmd.data(), 0, gathered);
		buffer_io(cmd, block_op::write, offset, gathered);
	}
	cmd.io().fua = fua;
	cmd.io().atomic = atomic;
	int64_t result = co_await submitted(cmd);
	release_lock(cmd);
	lu.atomic_writes().write_end();
	finish_result(cmd, result, io_kind::write, lba);
}

} // namespace tcmud::scsi
