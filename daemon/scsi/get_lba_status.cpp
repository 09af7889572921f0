// SPDX-License-Identifier: GPL-2.0-or-later
// GET LBA STATUS (SBC-4 5.7): from STARTING LBA on, runs of mapped and
// deallocated blocks, as the backstore finds them in its file (SEEK_DATA /
// SEEK_HOLE in the file handler). Every block from STARTING LBA to the end of
// the medium, up to what the allocation length holds, is described.
#include <algorithm>
#include <array>

#include "byte_order.h"
#include "emulation.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

constexpr std::size_t HEADER = 8;
constexpr std::size_t DESCRIPTOR = 16;
// The most descriptors one answer carries; an initiator asks again from the
// first LBA not described (SBC-4 allows fewer than the allocation length).
constexpr std::size_t MAX_DESCRIPTORS = 64;
// A descriptor's NUMBER OF LOGICAL BLOCKS is 32 bits.
constexpr uint64_t MAX_RUN_BLOCKS = UINT32_MAX;

constexpr uint8_t STATUS_MAPPED = 0x0;
constexpr uint8_t STATUS_DEALLOCATED = 0x1;

} // namespace

void emulate_get_lba_status(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	const logical_unit &lu = cmd.lu();
	uint64_t start = get_be64(cdb, 2);
	uint32_t allocation_length = get_be32(cdb, 10);
	uint64_t capacity = lu.num_blocks();
	// SBC-4: a STARTING LBA beyond the last LBA is out of range.
	if (start >= capacity) {
		cmd.finish_check_condition(
			sense_builder(ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE).information(start));
		return;
	}
	if (allocation_length == 0) {
		cmd.finish_good();
		return;
	}
	std::size_t room = allocation_length <= HEADER ? 1 : (allocation_length - HEADER) / DESCRIPTOR;
	std::size_t wanted = std::clamp<std::size_t>(room, 1, MAX_DESCRIPTORS);
	std::array<uint8_t, HEADER + MAX_DESCRIPTORS * DESCRIPTOR> buf{};
	uint32_t bs = lu.block_size();
	std::size_t n = 0;
	uint64_t lba = start;
	while (n < wanted && lba < capacity) {
		uint64_t left = std::min(capacity - lba, MAX_RUN_BLOCKS);
		allocation_run run;
		if (int rc = cmd.queue().allocation(lba * bs, left * bs, &run); rc < 0) {
			cmd.finish_io_error(rc, io_kind::read, lba);
			return;
		}
		// A run ends on the backstore's allocation unit; a block only
		// partly allocated counts as mapped, so round a hole inwards.
		uint64_t blocks = run.mapped ? (run.length + bs - 1) / bs : run.length / bs;
		if (blocks == 0) {
			run.mapped = true;
			blocks = 1;
		}
		blocks = std::min(blocks, left);
		uint8_t status = run.mapped ? STATUS_MAPPED : STATUS_DEALLOCATED;
		std::size_t prev = n > 0 ? HEADER + (n - 1) * DESCRIPTOR : 0;
		if (n > 0 && buf[prev + 12] == status &&
		    get_be32(buf, prev + 8) + blocks <= MAX_RUN_BLOCKS) {
			// The rounding above can split one status in two runs.
			put_be32(buf, prev + 8, uint32_t(get_be32(buf, prev + 8) + blocks));
		} else {
			std::size_t at = HEADER + n * DESCRIPTOR;
			put_be64(buf, at, lba);
			put_be32(buf, at + 8, uint32_t(blocks));
			buf[at + 12] = status;
			n++;
		}
		lba += blocks;
	}
	// PARAMETER DATA LENGTH: the bytes after this field.
	put_be32(buf, 0, 4 + n * DESCRIPTOR);
	finish_data_in(cmd, std::span<const uint8_t>(buf.data(), HEADER + n * DESCRIPTOR),
		       allocation_length);
}

} // namespace tcmud::scsi
