// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Every command the logical unit supports, in one table: dispatch, the
// reserved-bit check of each CDB and REPORT SUPPORTED OPERATION CODES all
// read it, so what we report is exactly what we accept.
#include <array>
#include <cstdint>
#include <span>

#include "command.h"

namespace tcmud::scsi {

class logical_unit;

struct opcode_info {
	uint8_t opcode;
	uint16_t service_action;
	bool has_service_action;  // service action in CDB byte 1, bits 4..0
	uint8_t cdb_length;
	// The CDB usage data of SPC-5 REPORT SUPPORTED OPERATION CODES: per
	// CDB byte, the bits the device server looks at. Any other bit set in a
	// CDB (reserved, unsupported protection or anchor fields, NACA, ...) is
	// an INVALID FIELD IN CDB. Byte 0 is the opcode itself.
	std::array<uint8_t, 16> usage;
	command::step_fn emulate;
	// nullptr: always supported; else whether this logical unit supports
	// it (UNMAP only where the backstore can discard).
	bool (*available)(const logical_unit &lu);
};

std::span<const opcode_info> opcode_table();

// The entry for (opcode, service action), or nullptr. If the opcode is known
// but the service action is not, *bad_service_action is set.
const opcode_info *find_opcode(uint8_t opcode, uint16_t service_action,
			       bool *bad_service_action);

// opcode -> its one row when the opcode has no service actions, else
// nullptr (unknown, or one row per service action: use find_opcode). One
// load for the commands every I/O sends.
extern const std::array<const opcode_info *, 256> plain_opcode_rows;

// Whether opcode carries a service action in CDB byte 1.
bool opcode_has_service_action(uint8_t opcode);

} // namespace tcmud::scsi
