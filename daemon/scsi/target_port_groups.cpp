// SPDX-License-Identifier: GPL-2.0-or-later
#include "target_port_groups.h"

#include <algorithm>

namespace tcmud::scsi {

target_port_groups with_lock_owner(target_port_groups tpg, std::optional<uint16_t> owner)
{
	if (!owner || std::ranges::none_of(tpg.groups, [&](const target_port_group &g) {
		    return g.id == *owner;
	    }))
		return tpg;
	constexpr uint8_t STATUS_IMPLICIT = 0x2;
	for (target_port_group &g : tpg.groups) {
		alua_state want = g.state;
		if (g.id == *owner)
			want = alua_state::active_optimized;
		else if (g.state == alua_state::active_optimized)
			want = alua_state::active_non_optimized;
		if (want != g.state) {
			g.state = want;
			g.status = STATUS_IMPLICIT;
		}
	}
	return tpg;
}

} // namespace tcmud::scsi
