// SPDX-License-Identifier: GPL-2.0-or-later
#include "logical_unit.h"

#include <bit>
#include <cstring>

#include "emulation.h"
#include "opcode_table.h"
#include "third_party_copy.h"

namespace tcmud::scsi {

namespace {

constexpr uint64_t MiB = 1024 * 1024;

uint32_t blocks_in(uint64_t bytes, uint32_t block_size)
{
	return static_cast<uint32_t>(std::max<uint64_t>(1, bytes / block_size));
}

void apply_defaults(logical_unit_config &cfg)
{
	if (!cfg.max_transfer_blocks)
		cfg.max_transfer_blocks = blocks_in(8 * MiB, cfg.block_size);
	if (!cfg.max_compare_and_write_blocks)
		cfg.max_compare_and_write_blocks = 1;
	// One command's work stays far inside the kernel's cmd_time_out (30 s
	// by default) on the slowest backstore we serve: an rbd pool
	// recovering at ~10 MB/s. WRITE SAME without UNMAP writes every block:
	// 32 MiB is ~3 s there, and 0xFFFF blocks is also LIO iblock's value,
	// WRITE SAME(10)'s 16-bit count, and under tcm_loop's 0xFFFF-sector
	// limit of one transfer, which an initiator checking the write with
	// one READ of the same length meets. UNMAP moves no data (hole
	// punches, BLKDISCARD, rbd discards: one object delete per 4 MiB), so
	// 256 MiB, at most 524288 blocks, is a few hundred operations at worst.
	if (!cfg.max_unmap_blocks)
		cfg.max_unmap_blocks = blocks_in(256 * MiB, cfg.block_size);
	if (!cfg.max_unmap_descriptors)
		cfg.max_unmap_descriptors = 256;
	if (!cfg.max_write_same_blocks)
		cfg.max_write_same_blocks =
			std::min<uint64_t>(0xffff, blocks_in(32 * MiB, cfg.block_size));
	// RWF_ATOMIC writes one power of two in [unit_min, unit_max] at an
	// offset that is a multiple of it; SBC-4's fields say "up to max, a
	// multiple of the granularity, at a multiple of the alignment", so
	// unit_min is both. Lengths between are still atomic against other
	// commands (range lock), only not across a crash.
	const backstore_caps &c = cfg.caps;
	if (c.atomic_write_unit_max >= cfg.block_size &&
	    c.atomic_write_unit_min <= c.atomic_write_unit_max) {
		uint32_t unit_min = std::max<uint32_t>(1, c.atomic_write_unit_min / cfg.block_size);
		cfg.max_atomic_transfer_blocks = c.atomic_write_unit_max / cfg.block_size;
		cfg.atomic_alignment_blocks = unit_min;
		cfg.atomic_granularity_blocks = unit_min;
	}
	if (!cfg.max_atomic_transfer_blocks)
		cfg.max_atomic_transfer_blocks = blocks_in(MiB, cfg.block_size);
}

// The highest set bit of a non-zero byte: the bit pointer for a reserved
// bit that was set.
int8_t highest_bit(uint8_t bits)
{
	return static_cast<int8_t>(7 - std::countl_zero(bits));
}

} // namespace

setup_result<std::unique_ptr<logical_unit>> logical_unit::create(logical_unit_config cfg)
{
	if (cfg.block_size < 512 || cfg.block_size > 65536 || !std::has_single_bit(cfg.block_size))
		return setup_error{EINVAL, "block size must be a power of two from 512 to 65536"};
	if (cfg.num_blocks == 0)
		return setup_error{EINVAL, "a logical unit needs at least one block"};
	apply_defaults(cfg);
	return std::unique_ptr<logical_unit>(new logical_unit(std::move(cfg)));
}

logical_unit::logical_unit(logical_unit_config cfg)
	: cfg_(std::move(cfg)), wce_(cfg_.write_cache_enabled), num_blocks_(cfg_.num_blocks),
	  max_transfer_blocks_(cfg_.max_transfer_blocks),
	  copy_results_(std::make_unique<scsi::copy_results>())
{
}

logical_unit::~logical_unit() = default;

std::string logical_unit::unit_serial() const
{
	return cfg_.unit_serial ? cfg_.unit_serial() : std::string();
}

target_port_groups logical_unit::port_groups() const
{
	return cfg_.port_groups ? cfg_.port_groups() : target_port_groups{};
}

namespace {

using cdb_word_mask = std::array<uint8_t, 16>;

// cdb_bytes_checked[n]: 0xff for CDB bytes 1 .. n-1, the ones the usage data
// covers (byte 0 is the opcode), 0 elsewhere.
constexpr auto cdb_bytes_checked = [] {
	std::array<cdb_word_mask, 17> masks{};
	for (size_t n = 0; n < masks.size(); n++)
		for (size_t i = 1; i < n; i++)
			masks[n][i] = 0xff;
	return masks;
}();

// Whether the CDB sets any bit its row's usage data does not allow: two
// 64-bit words instead of a loop over the bytes (every command pays this).
// The caller finds which byte only when one is set.
bool has_unexpected_bits(const std::array<uint8_t, command::CDB_BYTES_KEPT> &cdb,
			 const opcode_info &info)
{
	uint64_t bytes[2], usage[2], checked[2];
	std::memcpy(bytes, cdb.data(), sizeof(bytes));
	std::memcpy(usage, info.usage.data(), sizeof(usage));
	std::memcpy(checked, cdb_bytes_checked[info.cdb_length].data(), sizeof(checked));
	return ((bytes[0] & ~usage[0] & checked[0]) | (bytes[1] & ~usage[1] & checked[1])) != 0;
}

// Finds the command's table row and checks the CDB against it. Returns the
// first step, or nullptr after finishing the command with the sense SPC-5
// asks for: unknown opcode, unknown service action, or a bit set that the
// usage data does not allow (reserved, or an unsupported feature).
command::step_fn dispatch(const logical_unit &lu, command &cmd)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	if (cdb.empty()) {
		cmd.finish_check_condition(
			sense_builder(ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE));
		return nullptr;
	}
	const opcode_info *info = plain_opcode_rows[cdb[0]];
	if (!info) {
		uint16_t service_action = cdb.size() > 1 ? cdb[1] & 0x1f : 0;
		bool bad_service_action;
		info = find_opcode(cdb[0], service_action, &bad_service_action);
		if (bad_service_action) {
			finish_invalid_cdb(cmd, 1, 4);
			return nullptr;
		}
	}
	if (info && info->has_service_action && info->available && !info->available(lu)) {
		// A service action this LU does not offer now (REPORT TARGET
		// PORT GROUPS without ALUA): SPC-5 says INVALID FIELD IN CDB.
		finish_invalid_cdb(cmd, 1, 4);
		return nullptr;
	}
	if (!info || (info->available && !info->available(lu)) || cdb.size() < info->cdb_length) {
		cmd.finish_check_condition(
			sense_builder(ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE));
		return nullptr;
	}
	if (!has_unexpected_bits(cmd.cdb_storage(), *info))
		return info->emulate;
	for (uint16_t i = 1; i < info->cdb_length; i++) {
		uint8_t unexpected = cdb[i] & static_cast<uint8_t>(~info->usage[i]);
		if (unexpected) {
			finish_invalid_cdb(cmd, i, highest_bit(unexpected));
			return nullptr;
		}
	}
	return info->emulate;
}

} // namespace

void logical_unit::execute(command &cmd, backstore_queue &queue)
{
	cmd.begin(*this, queue, sense_format_for(descriptor_sense()));
	command::step_fn first = dispatch(*this, cmd);
	// Plain READ and WRITE, the bulk of all I/O, skip the step driver.
	if ((first == emulate_read || first == emulate_write) &&
	    execute_read_write_fused(cmd, first == emulate_write))
		return;
	// A rejected command still goes through run() so the owner is told
	// the same way, exactly once.
	cmd.run(first ? first : [](command &, int64_t) {});
}

void logical_unit::resume(command &cmd, backstore_queue &queue)
{
	cmd.resume(queue);
}

} // namespace tcmud::scsi
