// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/cdb_length.h"

#include <array>

namespace tcmud {

namespace {

// Indexed by opcode >> 5, the same table as the kernel's
// scsi_command_size_tbl: groups 6 and 7 are vendor specific and taken as 10.
constexpr std::array<uint8_t, 8> group_length = {6, 10, 10, 12, 16, 12, 10, 10};

constexpr size_t varlen_header = 8;
constexpr size_t varlen_additional_length_byte = 7;

} // namespace

size_t scsi_cdb_length(std::span<const uint8_t> prefix)
{
	if (prefix.empty())
		return 0;
	if (prefix[0] != variable_length_opcode)
		return group_length[prefix[0] >> 5];
	if (prefix.size() < varlen_header)
		return 0;
	size_t len = varlen_header + prefix[varlen_additional_length_byte];
	return len <= max_cdb_length ? len : 0;
}

} // namespace tcmud
