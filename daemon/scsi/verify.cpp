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
#include <optional>

#include "command_task.h"
#include "emulation.h"
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

// The data-out offset of the first difference between the medium's blocks
// [cursor, cursor + medium.size() / bs) and what BYTCHK compares them with.
std::optional<uint64_t> first_miscompare(command &cmd, uint8_t check, uint64_t cursor,
					 std::span<const uint8_t> medium)
{
	uint32_t bs = cmd.lu().block_size();
	if (check == BYTCHK_DATA) {
		auto at = first_difference(cmd.data(), cursor * bs, medium);
		return at ? std::optional(cursor * bs + *at) : std::nullopt;
	}
	for (uint64_t i = 0; i < medium.size() / bs; i++)
		if (auto at = first_difference(cmd.data(), 0, medium.subspan(i * bs, bs)))
			return at;
	return std::nullopt;
}

enum class verify_kind : uint8_t { verify, write_and_verify };

// VERIFY, or WRITE AND VERIFY (BYTCHK already checked).
command_task verify(command &cmd, uint8_t check, verify_kind kind)
{
	const bool write = kind == verify_kind::write_and_verify;
	lba_fields f = decode_lba_fields(cmd.cdb());
	transfer_data data = check == BYTCHK_ONE_BLOCK		   ? transfer_data::one_block
			     : check == BYTCHK_NONE && !write ? transfer_data::none
							       : transfer_data::each_block;
	if (!open_transfer(cmd, f, {.max_blocks = cmd.lu().max_transfer_blocks(), .data = data}))
		co_return;
	uint32_t bs = cmd.lu().block_size();

	if (write) {
		co_await lock_shared(cmd, f.lba, f.blocks);
		data_io(cmd, block_op::write, f.lba * bs, 0, uint64_t{f.blocks} * bs);
		// The verification must read what is on the medium, not a cache.
		cmd.io().fua = true;
		int64_t result = co_await submitted(cmd);
		if (finish_if_failed(cmd, result, io_kind::write, f.lba))
			co_return;
	}

	uint64_t chunk_limit = std::max<uint64_t>(1, VERIFY_CHUNK_BYTES / bs);
	for (uint64_t cursor = 0; cursor < f.blocks;) {
		uint64_t chunk = std::min<uint64_t>(f.blocks - cursor, chunk_limit);
		std::span<uint8_t> medium = bounce_space(cmd, chunk * bs);
		buffer_io(cmd, block_op::read, (f.lba + cursor) * bs, medium);
		int64_t result = co_await submitted(cmd);
		if (finish_if_failed(cmd, result, io_kind::read, f.lba + cursor))
			co_return;
		if (check != BYTCHK_NONE) {
			if (auto offset = first_miscompare(cmd, check, cursor, medium)) {
				release_lock(cmd);
				cmd.finish_check_condition(
					sense_builder(MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY)
						.information(*offset));
				co_return;
			}
		}
		cursor += chunk;
	}
	release_lock(cmd);
	cmd.finish_good();
}

uint8_t bytchk(const command &cmd)
{
	return (cmd.cdb()[1] >> 1) & 0x3;
}

} // namespace

void emulate_verify(command &cmd, int64_t)
{
	uint8_t check = bytchk(cmd);
	if (check == 2) {
		finish_invalid_cdb(cmd, 1, 2);
		return;
	}
	run_task(cmd, verify(cmd, check, verify_kind::verify));
}

void emulate_write_and_verify(command &cmd, int64_t)
{
	uint8_t check = bytchk(cmd);
	if (check >= 2) {
		finish_invalid_cdb(cmd, 1, 2);
		return;
	}
	run_task(cmd, verify(cmd, check, verify_kind::write_and_verify));
}

} // namespace tcmud::scsi
