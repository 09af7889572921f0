// SPDX-License-Identifier: GPL-2.0-or-later
// REPORT SUPPORTED OPERATION CODES (SPC-5 6.35), built from opcode_table so
// that it reports exactly what dispatch accepts.
#include <array>

#include "byte_order.h"
#include "emulation.h"
#include "logical_unit.h"
#include "opcode_table.h"

namespace tcmud::scsi {

namespace {

enum reporting_options : uint8_t {
	REPORT_ALL = 0,
	REPORT_OPCODE = 1,             // opcode without service action
	REPORT_OPCODE_SA = 2,          // opcode with service action
	REPORT_OPCODE_MAYBE_SA = 3,    // either (SPC-5)
};

constexpr uint8_t SUPPORT_NOT_SUPPORTED = 0x1;
constexpr uint8_t SUPPORT_STANDARD = 0x3;
constexpr std::size_t TIMEOUTS_LENGTH = 12;

using response = std::array<uint8_t, 1024>;

// The command timeouts descriptor: no timeouts are reported (all zero).
std::size_t put_timeouts(std::span<uint8_t> buf, std::size_t at)
{
	put_be16(buf, at, TIMEOUTS_LENGTH - 2);
	return at + TIMEOUTS_LENGTH;
}

std::size_t report_all(const logical_unit &lu, bool rctd, response &buf)
{
	std::size_t at = 4;
	for (const opcode_info &info : opcode_table()) {
		if (info.available && !info.available(lu))
			continue;
		buf[at] = info.opcode;
		put_be16(buf, at + 2, info.service_action);
		buf[at + 5] = static_cast<uint8_t>((rctd ? 0x02 : 0) |  // CTDP
						   (info.has_service_action ? 0x01 : 0));  // SERVACTV
		put_be16(buf, at + 6, info.cdb_length);
		at += 8;
		if (rctd)
			at = put_timeouts(buf, at);
	}
	put_be32(buf, 0, at - 4);
	return at;
}

std::size_t report_one(const logical_unit &lu, const opcode_info *info, bool rctd, response &buf)
{
	if (!info || (info->available && !info->available(lu))) {
		buf[1] = SUPPORT_NOT_SUPPORTED;
		return 4;
	}
	buf[1] = static_cast<uint8_t>((rctd ? 0x80 : 0) | SUPPORT_STANDARD);
	put_be16(buf, 2, info->cdb_length);
	std::copy_n(info->usage.begin(), info->cdb_length, buf.begin() + 4);
	std::size_t at = 4u + info->cdb_length;
	return rctd ? put_timeouts(buf, at) : at;
}

} // namespace

void emulate_report_supported_opcodes(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	bool rctd = cdb[2] & 0x80;
	uint8_t options = cdb[2] & 0x07;
	uint8_t opcode = cdb[3];
	uint16_t service_action = get_be16(cdb, 4);
	bool has_sa = opcode_has_service_action(opcode);
	response buf{};
	std::size_t length;
	bool unused;
	switch (options) {
	case REPORT_ALL:
		length = report_all(cmd.lu(), rctd, buf);
		break;
	case REPORT_OPCODE:
	case REPORT_OPCODE_SA:
		// SPC-5: asking for a service action of an opcode that has none,
		// or for an opcode without its service action, is invalid.
		if (has_sa != (options == REPORT_OPCODE_SA)) {
			finish_invalid_cdb(cmd, options == REPORT_OPCODE ? 3 : 4);
			return;
		}
		[[fallthrough]];
	case REPORT_OPCODE_MAYBE_SA:
		length = report_one(cmd.lu(), find_opcode(opcode, has_sa ? service_action : 0, &unused),
				    rctd, buf);
		break;
	default:
		finish_invalid_cdb(cmd, 2, 2);
		return;
	}
	finish_data_in(cmd, std::span<const uint8_t>(buf.data(), length), get_be32(cdb, 6));
}

} // namespace tcmud::scsi
