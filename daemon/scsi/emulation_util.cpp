// SPDX-License-Identifier: GPL-2.0-or-later
// Checks and responses shared by the command emulations.
#include <algorithm>

#include "byte_order.h"
#include "emulation.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

void finish_invalid_cdb(command &cmd, uint16_t byte, int8_t bit)
{
	cmd.finish_check_condition(sense_builder(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB)
					   .field(cdb_field(byte, bit)));
}

void finish_invalid_parameter(command &cmd, uint16_t byte, int8_t bit)
{
	cmd.finish_check_condition(
		sense_builder(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST)
			.field(parameter_field(byte, bit)));
}

void finish_parameter_list_length_error(command &cmd)
{
	cmd.finish_check_condition(
		sense_builder(ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR));
}

void finish_data_in(command &cmd, std::span<const uint8_t> response,
		    uint64_t allocation_length)
{
	auto n = static_cast<std::size_t>(std::min<uint64_t>(response.size(), allocation_length));
	uint64_t copied = copy_to_iovs(cmd.data(), 0, response.first(n));
	// The data area is reused across commands. A kernel without
	// CAP_READ_LEN returns the whole buffer to the initiator, so the bytes
	// past the response would be another command's data: zero them.
	zero_iovs(cmd.data(), copied);
	cmd.finish_good(copied);
}

bool check_lba_range(command &cmd, uint64_t lba, uint64_t blocks)
{
	return check_lba_range(cmd, lba, blocks, cmd.lu().num_blocks());
}

bool check_lba_range(command &cmd, uint64_t lba, uint64_t blocks, uint64_t capacity)
{
	if (lba <= capacity && blocks <= capacity - lba)
		return true;
	cmd.finish_check_condition(
		sense_builder(ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE).information(lba));
	return false;
}

// SBC-4 6.6.4: a length above the Block Limits VPD's maximum for the
// command is an invalid field in the CDB; SBC-4 4.16: a transfer length of
// zero is not an error (nothing moves), except where WSNZ says so.
bool open_transfer(command &cmd, const lba_fields &f, const transfer_rules &rules)
{
	if (f.blocks > rules.max_blocks || (f.blocks == 0 && rules.zero_blocks_invalid)) {
		finish_invalid_cdb(cmd, f.length_byte);
		return false;
	}
	if (!check_lba_range(cmd, f.lba, f.blocks))
		return false;
	if (f.blocks == 0) {
		cmd.finish_good();
		return false;
	}
	const uint64_t bs = cmd.lu().block_size();
	uint64_t data = 0;
	switch (rules.data) {
	case transfer_data::each_block: data = f.blocks * bs; break;
	case transfer_data::each_block_twice: data = 2 * f.blocks * bs; break;
	case transfer_data::one_block: data = bs; break;
	case transfer_data::none: break;
	}
	return check_data_length(cmd, data);
}

// The kernel rejects a WRITE whose expected data length disagrees with its
// CDB with INVALID FIELD IN COMMAND INFORMATION UNIT; a buffer too short for
// what the CDB asks gets the same here, for data in and data out alike.
bool check_data_length(command &cmd, uint64_t bytes)
{
	if (cmd.data_bytes() >= bytes)
		return true;
	cmd.finish_check_condition(
		sense_builder(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU));
	return false;
}

void set_io_data(command &cmd, uint64_t offset, uint64_t length)
{
	block_io &io = cmd.io();
	io.length = length;
	if (offset == 0 && cmd.data_bytes() == length) {
		io.iov = cmd.data();
		return;
	}
	slice_iovs(cmd.data(), offset, length, cmd.scratch_iov());
	io.iov = cmd.scratch_iov();
}

void data_io(command &cmd, block_op op, uint64_t offset, uint64_t data_offset,
	     uint64_t length)
{
	block_io &io = cmd.io();
	io.op = op;
	io.fua = false;
	io.offset = offset;
	set_io_data(cmd, data_offset, length);
}

void buffer_io(command &cmd, block_op op, uint64_t offset, std::span<uint8_t> buffer)
{
	cmd.scratch_iov().assign(1, iovec{buffer.data(), buffer.size()});
	block_io &io = cmd.io();
	io.op = op;
	io.fua = false;
	io.offset = offset;
	io.length = buffer.size();
	io.iov = cmd.scratch_iov();
}

std::span<uint8_t> bounce_space(command &cmd, uint64_t length)
{
	bounce_buffer &bounce = cmd.bounce();
	if (bounce.size() < length)
		bounce.resize(length);
	return {bounce.data(), length};
}

void no_data_io(command &cmd, block_op op, uint64_t offset, uint64_t length)
{
	block_io &io = cmd.io();
	io.op = op;
	io.fua = false;
	io.offset = offset;
	io.length = length;
	io.iov = {};
}

void finish_result(command &cmd, int64_t result, io_kind kind, uint64_t lba)
{
	if (!finish_if_failed(cmd, result, kind, lba)) {
		release_lock(cmd);
		cmd.finish_good();
	}
}

bool finish_if_failed(command &cmd, int64_t result, io_kind kind, uint64_t lba)
{
	if (result >= 0)
		return false;
	release_lock(cmd);
	cmd.finish_io_error(result, kind, lba);
	return true;
}

void take_write_lock(command &cmd, uint64_t lba, uint64_t blocks, command::step_fn next)
{
	cmd.work().locked = true;
	cmd.continue_when(cmd.lu().ranges().lock_shared(cmd.range(), lba, blocks), next);
}

void release_lock(command &cmd)
{
	if (!cmd.work().locked)
		return;
	cmd.work().locked = false;
	cmd.lu().ranges().unlock(cmd.range());
}

} // namespace tcmud::scsi
