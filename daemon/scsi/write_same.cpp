// SPDX-License-Identifier: GPL-2.0-or-later
// WRITE SAME (10/16, SBC-4 5.48/5.49): one block of data (or zeroes, with
// NDOB) written to every LBA of a range. The cheapest correct request wins:
//   - UNMAP set, data all zero, backstore discards and discarded blocks read
//     back as zero (LBPRZ): a discard (SBC-4 4.7.3.6 lets us unmap);
//   - data all zero and the backstore writes zeroes: one write_zeroes;
//   - otherwise the block is written repeatedly, up to PATTERN_CHUNK blocks
//     per request from one bounce copy.
// An UNMAP bit we cannot honour is not an error: the data is still written,
// so reads return what the initiator asked for either way.
#include <algorithm>

#include "emulation.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

enum class write_same_mode : uint8_t { discard, zeroes, pattern };

constexpr uint8_t UNMAP_BIT = 0x08;
constexpr uint8_t NDOB_BIT = 0x01;  // WRITE SAME(16) only
// Well under IOV_MAX (1024): one iovec per block, all pointing at the bounce.
constexpr uint64_t PATTERN_CHUNK = 256;

// Loads the block to write into the bounce buffer: zeroes with NDOB, else
// the data-out buffer's one block (open_transfer checked it is there).
void load_block(command &cmd, bool ndob)
{
	uint32_t bs = cmd.lu().block_size();
	bounce_buffer &bounce = cmd.bounce();
	if (bounce.size() < bs)
		bounce.resize(bs);
	if (ndob) {
		std::fill_n(bounce.begin(), bs, 0);
		return;
	}
	copy_from_iovs(cmd.data(), 0, std::span<uint8_t>(bounce.data(), bs));
}

write_same_mode choose_mode(const command &cmd, bool unmap, bool zero)
{
	const backstore_caps &caps = cmd.lu().caps();
	if (unmap && zero && caps.discard && caps.discard_zeroes)
		return write_same_mode::discard;
	if (zero && caps.write_zeroes)
		return write_same_mode::zeroes;
	return write_same_mode::pattern;
}

} // namespace

command_task emulate_write_same(command &cmd)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	const logical_unit &lu = cmd.lu();
	lba_fields f = decode_lba_fields(cdb);
	bool ndob = cdb[0] == WRITE_SAME_16 && (cdb[1] & NDOB_BIT);
	// WSNZ = 1 in VPD 0xb0: zero blocks ("to the end") is refused, as is
	// more than MAXIMUM WRITE SAME LENGTH.
	if (!open_transfer(cmd, f, {.max_blocks = lu.config().max_write_same_blocks,
				    .data = ndob ? transfer_data::none : transfer_data::one_block,
				    .zero_blocks_invalid = true}))
		co_return;
	load_block(cmd, ndob);
	uint32_t bs = lu.block_size();
	std::span<const uint8_t> block(cmd.bounce().data(), bs);
	bool zero = std::all_of(block.begin(), block.end(), [](uint8_t b) { return b == 0; });
	write_same_mode mode = choose_mode(cmd, cdb[1] & UNMAP_BIT, zero);
	bool fua = !lu.write_cache_enabled();

	co_await lock_shared(cmd, f.lba, f.blocks);
	if (mode != write_same_mode::pattern) {
		no_data_io(cmd, mode == write_same_mode::discard ? block_op::discard
							      : block_op::write_zeroes,
			   f.lba * bs, uint64_t{f.blocks} * bs);
		cmd.io().fua = fua;
		int64_t result = co_await submitted(cmd);
		finish_result(cmd, result, io_kind::write, f.lba);
		co_return;
	}
	for (uint64_t cursor = 0; cursor < f.blocks;) {
		uint64_t chunk = std::min(f.blocks - cursor, PATTERN_CHUNK);
		cmd.scratch_iov().assign(chunk, iovec{cmd.bounce().data(), bs});
		block_io &io = cmd.io();
		io.op = block_op::write;
		io.fua = fua;
		io.offset = (f.lba + cursor) * bs;
		io.length = chunk * bs;
		io.iov = cmd.scratch_iov();
		int64_t result = co_await submitted(cmd);
		if (finish_if_failed(cmd, result, io_kind::write, f.lba + cursor))
			co_return;
		cursor += chunk;
	}
	release_lock(cmd);
	cmd.finish_good();
}

} // namespace tcmud::scsi
