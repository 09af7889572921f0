// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The first step of each supported command (opcode_table.cpp maps opcodes to
// them) or, for a command of several requests, its coroutine (started by
// start_task<>), plus the checks and responses they share. Internal to
// daemon/scsi.
#include <cstdint>
#include <span>

#include "byte_order.h"
#include "command.h"
#include "command_task.h"
#include "sense_builder.h"

namespace tcmud::scsi {

// simple_commands.cpp
void emulate_test_unit_ready(command &cmd, int64_t);
void emulate_request_sense(command &cmd, int64_t);
void emulate_start_stop_unit(command &cmd, int64_t);
void emulate_read_capacity_10(command &cmd, int64_t);
void emulate_read_capacity_16(command &cmd, int64_t);
// inquiry.cpp
void emulate_inquiry(command &cmd, int64_t);
// mode_pages.cpp
void emulate_mode_sense(command &cmd, int64_t);
void emulate_mode_select(command &cmd, int64_t);
// read_write.cpp
void emulate_read(command &cmd, int64_t);
void emulate_write(command &cmd, int64_t);
void emulate_synchronize_cache(command &cmd, int64_t);
// The fused READ/WRITE path (logical_unit::execute); false: take the steps.
bool execute_read_write_fused(command &cmd, bool write);
// verify.cpp
void emulate_verify(command &cmd, int64_t);
void emulate_write_and_verify(command &cmd, int64_t);
// write_same.cpp
command_task emulate_write_same(command &cmd);
// unmap.cpp
command_task emulate_unmap(command &cmd);
// compare_and_write.cpp
command_task emulate_compare_and_write(command &cmd);
// block_commands.cpp
void emulate_format_unit(command &cmd, int64_t);
void emulate_send_diagnostic(command &cmd, int64_t);
void emulate_prevent_allow_medium_removal(command &cmd, int64_t);
void emulate_read_defect_data(command &cmd, int64_t);
void emulate_prefetch(command &cmd, int64_t);
// get_lba_status.cpp
void emulate_get_lba_status(command &cmd, int64_t);
// orwrite.cpp
command_task emulate_orwrite(command &cmd);
// write_atomic.cpp
command_task emulate_write_atomic(command &cmd);
// extended_copy.cpp, receive_copy_results.cpp
command_task emulate_extended_copy(command &cmd);
void emulate_receive_copy_results(command &cmd, int64_t);
// report_opcodes.cpp
void emulate_report_supported_opcodes(command &cmd, int64_t);
void emulate_report_target_port_groups(command &cmd, int64_t);

// The first step of a coroutine emulation: runs it (command_task.h).
template <command_task (*emulation)(command &)>
void start_task(command &cmd, int64_t)
{
	run_task(cmd, emulation(cmd));
}

// --- shared by the emulations (emulation_util.cpp) ---

void finish_invalid_cdb(command &cmd, uint16_t byte, int8_t bit = -1);
void finish_invalid_parameter(command &cmd, uint16_t byte, int8_t bit = -1);
void finish_parameter_list_length_error(command &cmd);

// Copies up to allocation_length bytes of response into the data-in buffer
// and finishes GOOD with read_len = bytes copied.
void finish_data_in(command &cmd, std::span<const uint8_t> response,
		    uint64_t allocation_length);

// LBA and transfer length of READ/WRITE/VERIFY-style CDBs, by CDB size.
struct lba_fields {
	uint64_t lba = 0;
	uint32_t blocks = 0;
	uint16_t length_byte = 0;  // where the length field starts (for pointers)
};
// The CDB size follows from the opcode's group code (SPC-5 4.2.5.1); the
// dispatcher has checked the CDB is that long. READ(6)/WRITE(6) have a
// 21-bit LBA and a one-byte length in which 0 means 256 blocks (SBC-4).
// Inline: every READ and WRITE decodes its CDB here.
inline lba_fields decode_lba_fields(std::span<const uint8_t> cdb)
{
	lba_fields f;
	switch (cdb[0] >> 5) {
	case 0:
		f.lba = get_be(cdb, 1, 3) & 0x1fffff;
		f.blocks = cdb[4] ? cdb[4] : 256;
		f.length_byte = 4;
		break;
	case 1:
	case 2:
		f.lba = get_be32(cdb, 2);
		f.blocks = get_be16(cdb, 7);
		f.length_byte = 7;
		break;
	case 5:
		f.lba = get_be32(cdb, 2);
		f.blocks = get_be32(cdb, 6);
		f.length_byte = 6;
		break;
	default:
		f.lba = get_be64(cdb, 2);
		f.blocks = get_be32(cdb, 10);
		f.length_byte = 10;
		break;
	}
	return f;
}

// FUA, byte 1 of every block command that has it (READ/WRITE 10, 12, 16,
// WRITE ATOMIC, ORWRITE, COMPARE AND WRITE; the 6-byte forms have none).
inline constexpr uint8_t CDB_FUA = 0x08;

// Whether a write must be on the medium before GOOD: the CDB's FUA, or the
// write cache off (SBC-4: with WCE = 0 every write is forced unit access).
inline bool write_through(const command &cmd, bool write_cache_enabled)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	return ((cdb[0] >> 5) != 0 && (cdb[1] & CDB_FUA)) || !write_cache_enabled;
}

// The opening checks of every command that moves a range of blocks: READ,
// WRITE, VERIFY, WRITE AND VERIFY, ORWRITE, WRITE SAME, COMPARE AND WRITE,
// WRITE ATOMIC. The caller decodes its CDB into lba_fields (decode_lba_fields,
// or its own layout) and says what its data buffer must hold.
enum class transfer_data : uint8_t {
	each_block,       // one block per block moved (READ, WRITE, ...)
	each_block_twice, // compare then write data (COMPARE AND WRITE)
	one_block,        // a single block (WRITE SAME, VERIFY with BYTCHK 11b)
	none,             // no data (VERIFY with BYTCHK 00b, WRITE SAME with NDOB)
};
struct transfer_rules {
	uint64_t max_blocks;      // the command's limit (Block Limits VPD)
	transfer_data data = transfer_data::each_block;
	bool zero_blocks_invalid = false; // WRITE SAME: WSNZ = 1
};
// In this order, each finishing the command with its sense: the length
// above max_blocks (or zero where zero_blocks_invalid): INVALID FIELD IN
// CDB at the length's byte; the range past the capacity: LBA OUT OF
// RANGE; a zero length: GOOD, nothing moved; a data buffer shorter than
// the data the CDB implies: INVALID FIELD IN COMMAND INFORMATION UNIT.
// True when the command goes on.
bool open_transfer(command &cmd, const lba_fields &f, const transfer_rules &rules);

// Each of these finishes the command with the matching sense and returns
// false when the check fails.
bool check_lba_range(command &cmd, uint64_t lba, uint64_t blocks);
// The same against a capacity the caller read once (a resize may change it).
bool check_lba_range(command &cmd, uint64_t lba, uint64_t blocks, uint64_t capacity);
// The data buffer must hold at least `bytes` (the ring sizes it from the
// initiator's expected length, which can disagree with the CDB).
bool check_data_length(command &cmd, uint64_t bytes);

// Points cmd.io() at bytes [offset, offset + length) of the data buffer,
// without copying the iovec list when it is the whole buffer.
void set_io_data(command &cmd, uint64_t offset, uint64_t length);

// Set up cmd.io() for the next request, fua off (the caller sets it where
// it applies), moving:
// - data_io: `length` bytes of the data buffer from `data_offset`;
void data_io(command &cmd, block_op op, uint64_t offset, uint64_t data_offset,
	     uint64_t length);
// - buffer_io: `buffer`, which stays valid until the request completes
//   (a part of bounce_space());
void buffer_io(command &cmd, block_op op, uint64_t offset, std::span<uint8_t> buffer);
// - no_data_io: nothing (flush, discard, write_zeroes).
void no_data_io(command &cmd, block_op op, uint64_t offset, uint64_t length);

// The first `length` bytes of the command's bounce buffer, grown to fit.
std::span<uint8_t> bounce_space(command &cmd, uint64_t length);

// After a request: releases the range lock (if held) and finishes with the
// sense for a failed request (result < 0), else GOOD.
void finish_result(command &cmd, int64_t result, io_kind kind, uint64_t lba);
// The same for a failed request only: true if it failed (and the command
// is finished), false to go on.
bool finish_if_failed(command &cmd, int64_t result, io_kind kind, uint64_t lba);

// Range-lock helpers for step emulations: the lock a write takes (continue
// with `next` now or once granted), and the release after it (also for
// command_task.h's lock_shared/lock_exclusive).
void take_write_lock(command &cmd, uint64_t lba, uint64_t blocks, command::step_fn next);
void release_lock(command &cmd);

} // namespace tcmud::scsi
