// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Which devices an EXTENDED COPY may move data between (tcmud.conf
// copy_groups).
//
// TCMU does not tell the daemon which initiator or session sent a command,
// so tcmud cannot check LIO's LUN masking or read-only mappings for the
// other LUN a copy names. Without a group, a copy stays inside the LUN that
// received it; two devices may copy between each other only if the
// administrator put both in one group (the class of CVE-2020-28374, which
// LIO fixed for its own XCOPY engine by checking the session).
//
//   copy_groups = "vmfs: disk0 disk1; backup: user_3/disk2 disk3"
//
// A group is "NAME: MEMBER MEMBER ...", groups separated by ';'. A member is
// a device's configfs name ("disk0", as targetcli shows it under
// /backstores/user:SUBTYPE; letters, digits and _ . - + @), or "user_N/NAME"
// for the one device of that name under HBA user_N. Two devices may copy
// between each other when one group names both.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tcmud/setup_result.h"

namespace tcmud {

struct copy_group {
	std::string name;
	std::vector<std::string> members;  // "NAME" or "user_N/NAME"

	bool operator==(const copy_group &) const = default;
};

struct copy_group_set {
	std::vector<copy_group> groups;

	bool operator==(const copy_group_set &) const = default;

	// True if one group names both devices (configfs HBA index and name).
	bool share_group(uint32_t hba_a, std::string_view device_a, uint32_t hba_b,
			 std::string_view device_b) const;
};

// The groups the text names, or EINVAL and what is wrong with it (no key
// name in the message). "none" is no group at all.
setup_result<copy_group_set> parse_copy_groups(std::string_view text);

// The text parse_copy_groups reads back, for logs: "none" if empty.
std::string to_string(const copy_group_set &g);

} // namespace tcmud
