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

#include "handlers.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

enum write_same_mode : uint8_t { WS_DISCARD, WS_ZEROES, WS_PATTERN };

constexpr uint8_t UNMAP_BIT = 0x08;
constexpr uint8_t NDOB_BIT = 0x01;  // WRITE SAME(16) only
// Well under IOV_MAX (1024): one iovec per block, all pointing at the bounce.
constexpr uint64_t PATTERN_CHUNK = 256;

void pattern_next_chunk(command &cmd);

void single_done(command &cmd, int64_t result)
{
	release_lock(cmd);
	if (result < 0) {
		cmd.finish_io_error(result, true, cmd.work().lba);
		return;
	}
	cmd.finish_good();
}

void pattern_chunk_done(command &cmd, int64_t result)
{
	command::work_state &w = cmd.work();
	if (result < 0) {
		release_lock(cmd);
		cmd.finish_io_error(result, true, w.lba + w.cursor);
		return;
	}
	w.cursor += w.chunk;
	pattern_next_chunk(cmd);
}

void pattern_next_chunk(command &cmd)
{
	command::work_state &w = cmd.work();
	uint32_t bs = cmd.lu().block_size();
	if (w.cursor == w.blocks) {
		release_lock(cmd);
		cmd.finish_good();
		return;
	}
	w.chunk = std::min(w.blocks - w.cursor, PATTERN_CHUNK);
	cmd.scratch_iov().assign(w.chunk, iovec{cmd.bounce().data(), bs});
	block_io &io = cmd.io();
	io.op = block_op::write;
	io.fua = w.fua;
	io.offset = (w.lba + w.cursor) * bs;
	io.length = w.chunk * bs;
	io.iov = cmd.scratch_iov();
	cmd.submit(pattern_chunk_done);
}

void locked(command &cmd, int64_t)
{
	command::work_state &w = cmd.work();
	if (w.mode == WS_PATTERN) {
		w.cursor = 0;
		pattern_next_chunk(cmd);
		return;
	}
	uint32_t bs = cmd.lu().block_size();
	block_io &io = cmd.io();
	io.op = w.mode == WS_DISCARD ? block_op::discard : block_op::write_zeroes;
	io.fua = w.fua;
	io.offset = w.lba * bs;
	io.length = w.blocks * bs;
	io.iov = {};
	cmd.submit(single_done);
}

// Loads the block to write into the bounce buffer; false if the command
// was finished because the buffer is too short.
bool load_block(command &cmd, bool ndob)
{
	uint32_t bs = cmd.lu().block_size();
	bounce_buffer &bounce = cmd.bounce();
	if (bounce.size() < bs)
		bounce.resize(bs);
	if (ndob) {
		std::fill_n(bounce.begin(), bs, 0);
		return true;
	}
	if (!check_data_length(cmd, bs))
		return false;
	copy_from_iovs(cmd.data(), 0, std::span<uint8_t>(bounce.data(), bs));
	return true;
}

write_same_mode choose_mode(const command &cmd, bool unmap, bool zero)
{
	const backstore_caps &caps = cmd.lu().caps();
	if (unmap && zero && caps.discard && caps.discard_zeroes)
		return WS_DISCARD;
	if (zero && caps.write_zeroes)
		return WS_ZEROES;
	return WS_PATTERN;
}

} // namespace

void handle_write_same(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	const logical_unit &lu = cmd.lu();
	lba_fields f = decode_lba_fields(cdb);
	bool ndob = cdb[0] == WRITE_SAME_16 && (cdb[1] & NDOB_BIT);
	// WSNZ = 1 in VPD 0xb0: zero blocks ("to the end") is refused, as is
	// more than MAXIMUM WRITE SAME LENGTH.
	if (f.blocks == 0 || f.blocks > lu.config().max_write_same_blocks) {
		finish_invalid_cdb(cmd, f.length_byte);
		return;
	}
	if (!check_lba_range(cmd, f.lba, f.blocks) || !load_block(cmd, ndob))
		return;
	std::span<const uint8_t> block(cmd.bounce().data(), lu.block_size());
	bool zero = std::all_of(block.begin(), block.end(), [](uint8_t b) { return b == 0; });
	command::work_state &w = cmd.work();
	w.lba = f.lba;
	w.blocks = f.blocks;
	w.mode = choose_mode(cmd, cdb[1] & UNMAP_BIT, zero);
	w.fua = !lu.write_cache_enabled();
	take_write_lock(cmd, f.lba, f.blocks, locked);
}

} // namespace tcmud::scsi
