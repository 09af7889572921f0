// SPDX-License-Identifier: GPL-2.0-or-later
// Commands answered from the logical unit's own state, with no backstore
// request: TEST UNIT READY, REQUEST SENSE, START STOP UNIT, READ CAPACITY.
#include <array>

#include "byte_order.h"
#include "emulation.h"
#include "logical_unit.h"

namespace tcmud::scsi {

// An emulated disk is always ready: there is no medium to spin up.
void emulate_test_unit_ready(command &cmd, int64_t)
{
	cmd.finish_good();
}

// Sense is always returned with the failing command (autosense), so there is
// never a pending condition to report: NO SENSE, in the format DESC asks
// for (SPC-5 6.39).
void emulate_request_sense(command &cmd, int64_t)
{
	const sense_format format = sense_format_for(cmd.cdb()[1] & 0x01);
	std::array<uint8_t, sense_builder::FIXED_LENGTH> sense{};
	std::size_t n = sense_builder(NO_SENSE, ASC_NO_ADDITIONAL_SENSE).build(format, sense);
	finish_data_in(cmd, std::span<const uint8_t>(sense.data(), n), cmd.cdb()[4]);
}

// SBC-4 5.27. Only POWER CONDITION 0 (START_VALID: process START and LOEJ)
// is supported. START and LOEJ are accepted and change nothing: the unit is
// shared by every initiator and its backstore cannot be stopped or ejected.
void emulate_start_stop_unit(command &cmd, int64_t)
{
	constexpr uint8_t POWER_CONDITION = 0xf0;  // byte 4, bits 7..4
	std::span<const uint8_t> cdb = cmd.cdb();
	if (cdb[4] & POWER_CONDITION) {
		finish_invalid_cdb(cmd, 4, 7);
		return;
	}
	if (cdb[3] & 0x0f) {
		finish_invalid_cdb(cmd, 3, 3);
		return;
	}
	cmd.finish_good();
}

// SBC-4 5.20: the last LBA, or 0xffffffff to send the initiator to
// READ CAPACITY(16) when it does not fit.
void emulate_read_capacity_10(command &cmd, int64_t)
{
	const logical_unit &lu = cmd.lu();
	std::array<uint8_t, 8> data{};
	uint64_t last = lu.num_blocks() - 1;
	put_be32(data, 0, last > UINT32_MAX ? UINT32_MAX : last);
	put_be32(data, 4, lu.block_size());
	finish_data_in(cmd, data, data.size());
}

// SBC-4 5.21: LBPME says the unit is thin provisioned (UNMAP works), LBPRZ
// that unmapped blocks read back as zeroes.
void emulate_read_capacity_16(command &cmd, int64_t)
{
	const logical_unit &lu = cmd.lu();
	std::array<uint8_t, 32> data{};
	put_be64(data, 0, lu.num_blocks() - 1);
	put_be32(data, 8, lu.block_size());
	if (lu.caps().discard) {
		data[14] |= 0x80;  // LBPME
		if (lu.caps().discard_zeroes)
			data[14] |= 0x40;  // LBPRZ
	}
	finish_data_in(cmd, data, get_be32(cmd.cdb(), 10));
}

} // namespace tcmud::scsi
