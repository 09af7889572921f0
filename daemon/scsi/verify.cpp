// SPDX-License-Identifier: GPL-2.0-or-later
// VERIFY (10/16, SBC-4 5.34/5.35) and WRITE AND VERIFY (10/16, 5.46/5.47).
// Both read the blocks back in chunks into the command's bounce buffer and,
// when BYTCHK asks, compare them with the data-out buffer:
//   BYTCHK 00b: medium verification only (the read must succeed);
//   BYTCHK 01b: compare with the data-out buffer, block for block;
//   BYTCHK 11b: (VERIFY only) compare every block with the single block
//               the data-out buffer holds;
//   BYTCHK 10b is reserved, and so is 11b for WRITE AND VERIFY.
#include <algorithm>

#include "handlers.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

constexpr uint8_t BYTCHK_NONE = 0;
constexpr uint8_t BYTCHK_DATA = 1;
constexpr uint8_t BYTCHK_ONE_BLOCK = 3;

// Verification reads at most this much at a time, so the bounce buffer of a
// command slot stays small whatever the verification length.
constexpr uint64_t VERIFY_CHUNK_BYTES = 128 * 1024;

uint8_t bytchk(const command &cmd)
{
	return (cmd.cdb()[1] >> 1) & 0x3;
}

void verify_next_chunk(command &cmd);

void finish_miscompare(command &cmd, uint64_t offset)
{
	release_lock(cmd);
	cmd.finish_check_condition(
		sense_builder(MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY).information(offset));
}

// Returns the data-out offset of the first difference in the chunk just read.
std::optional<uint64_t> compare_chunk(command &cmd)
{
	const command::work_state &w = cmd.work();
	uint32_t bs = cmd.lu().block_size();
	std::span<const uint8_t> medium(cmd.bounce().data(), w.chunk * bs);
	if (w.mode == BYTCHK_DATA) {
		auto at = first_difference(cmd.data(), w.cursor * bs, medium);
		return at ? std::optional(w.cursor * bs + *at) : std::nullopt;
	}
	for (uint64_t i = 0; i < w.chunk; i++)
		if (auto at = first_difference(cmd.data(), 0, medium.subspan(i * bs, bs)))
			return at;
	return std::nullopt;
}

void verify_chunk_done(command &cmd, int64_t result)
{
	command::work_state &w = cmd.work();
	if (result < 0) {
		release_lock(cmd);
		cmd.finish_io_error(result, false, w.lba + w.cursor);
		return;
	}
	if (w.mode != BYTCHK_NONE) {
		if (auto offset = compare_chunk(cmd)) {
			finish_miscompare(cmd, *offset);
			return;
		}
	}
	w.cursor += w.chunk;
	verify_next_chunk(cmd);
}

void verify_next_chunk(command &cmd)
{
	command::work_state &w = cmd.work();
	uint32_t bs = cmd.lu().block_size();
	if (w.cursor == w.blocks) {
		release_lock(cmd);
		cmd.finish_good();
		return;
	}
	w.chunk = std::min<uint64_t>(w.blocks - w.cursor, std::max<uint64_t>(1, VERIFY_CHUNK_BYTES / bs));
	bounce_buffer &bounce = cmd.bounce();
	if (bounce.size() < w.chunk * bs)
		bounce.resize(w.chunk * bs);
	cmd.scratch_iov().assign(1, iovec{bounce.data(), w.chunk * bs});
	block_io &io = cmd.io();
	io.op = block_op::read;
	io.fua = false;
	io.offset = (w.lba + w.cursor) * bs;
	io.length = w.chunk * bs;
	io.iov = cmd.scratch_iov();
	cmd.submit(verify_chunk_done);
}

// Checks what VERIFY and WRITE AND VERIFY share. Returns false if the
// command is finished (error, or nothing to do).
bool prepare_verify(command &cmd, uint64_t data_blocks_per_block)
{
	lba_fields f = decode_lba_fields(cmd.cdb());
	if (!check_transfer_length(cmd, f) || !check_lba_range(cmd, f.lba, f.blocks))
		return false;
	if (f.blocks == 0) {
		cmd.finish_good();
		return false;
	}
	uint64_t data_blocks = cmd.work().mode == BYTCHK_ONE_BLOCK ? 1 : f.blocks * data_blocks_per_block;
	if (!check_data_length(cmd, data_blocks * cmd.lu().block_size()))
		return false;
	cmd.work().lba = f.lba;
	cmd.work().blocks = f.blocks;
	cmd.work().cursor = 0;
	return true;
}

void write_and_verify_written(command &cmd, int64_t result)
{
	if (result < 0) {
		release_lock(cmd);
		cmd.finish_io_error(result, true, cmd.work().lba);
		return;
	}
	verify_next_chunk(cmd);
}

void write_and_verify_locked(command &cmd, int64_t)
{
	const command::work_state &w = cmd.work();
	uint32_t bs = cmd.lu().block_size();
	block_io &io = cmd.io();
	io.op = block_op::write;
	// The verification must read what is on the medium, not in a cache.
	io.fua = true;
	io.offset = w.lba * bs;
	set_io_data(cmd, 0, w.blocks * bs);
	cmd.submit(write_and_verify_written);
}

} // namespace

void handle_verify(command &cmd, int64_t)
{
	uint8_t check = bytchk(cmd);
	if (check == 2) {
		finish_invalid_cdb(cmd, 1, 2);
		return;
	}
	cmd.work().mode = check;
	if (!prepare_verify(cmd, check == BYTCHK_NONE ? 0 : 1))
		return;
	verify_next_chunk(cmd);
}

void handle_write_and_verify(command &cmd, int64_t)
{
	uint8_t check = bytchk(cmd);
	if (check >= 2) {
		finish_invalid_cdb(cmd, 1, 2);
		return;
	}
	cmd.work().mode = check;
	if (!prepare_verify(cmd, 1))
		return;
	take_write_lock(cmd, cmd.work().lba, cmd.work().blocks, write_and_verify_locked);
}

} // namespace tcmud::scsi
