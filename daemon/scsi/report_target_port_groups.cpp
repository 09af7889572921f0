// SPDX-License-Identifier: GPL-2.0-or-later
// REPORT TARGET PORT GROUPS (SPC-5 6.37): the groups of target_port_groups.h
// with their states, in the length-only or the extended header format.
#include <vector>

#include "byte_order.h"
#include "emulation.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

constexpr uint8_t FORMAT_EXTENDED = 0x1;  // PARAMETER DATA FORMAT 001b

std::vector<uint8_t> encode(const target_port_groups &tpg, bool extended)
{
	std::vector<uint8_t> out(extended ? 8 : 4, 0);
	if (extended) {
		out[4] = FORMAT_EXTENDED << 4;
		out[5] = tpg.implicit_transition_secs;
	}
	for (const target_port_group &g : tpg.groups) {
		// The count is one byte; a group with more ports than that is
		// cut, which no LIO configuration reaches (ports are TPGs).
		const std::size_t ports = std::min<std::size_t>(g.relative_ports.size(), 255);
		const std::size_t at = out.size();
		out.resize(at + 8 + 4 * ports, 0);
		out[at] = static_cast<uint8_t>((g.preferred ? 0x80 : 0) |
					       (static_cast<uint8_t>(g.state) & 0x0f));
		out[at + 1] = g.supported;
		put_be16(out, at + 2, g.id);
		out[at + 5] = g.status;
		out[at + 7] = static_cast<uint8_t>(ports);
		for (std::size_t i = 0; i < ports; i++)
			put_be16(out, at + 8 + 4 * i + 2, g.relative_ports[i]);
	}
	// RETURN DATA LENGTH: the descriptors, not the header (as LIO's own
	// emulation and SPC-5's "n - 3" for the length-only format say).
	put_be32(out, 0, out.size() - (extended ? 8 : 4));
	return out;
}

} // namespace

void emulate_report_target_port_groups(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	constexpr unsigned FORMAT_SHIFT = 5;  // byte 1: PARAMETER DATA FORMAT, bits 7..5
	const uint8_t format = cdb[1] >> FORMAT_SHIFT;
	if (format > FORMAT_EXTENDED) {
		finish_invalid_cdb(cmd, 1, 7);
		return;
	}
	const target_port_groups tpg = cmd.lu().port_groups();
	if (tpg.groups.empty()) {
		// The groups went between dispatch and here: no ALUA now,
		// as for a service action not offered (dispatch).
		finish_invalid_cdb(cmd, 1, 4);
		return;
	}
	const std::vector<uint8_t> data = encode(tpg, format == FORMAT_EXTENDED);
	finish_data_in(cmd, data, get_be32(cdb, 6));
}

} // namespace tcmud::scsi
