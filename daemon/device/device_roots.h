// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The file-system roots device code reads (and the one it writes state to). Injected everywhere, so unit
// tests point them at a fake tree in a temporary directory (as libnvme's
// tests do with recorded sysfs trees) and never need the kernel modules.
#include <filesystem>

namespace tcmud {

struct device_roots {
	std::filesystem::path sysfs = "/sys";
	std::filesystem::path configfs = "/sys/kernel/config";
	std::filesystem::path dev = "/dev";
	// Kept across restarts: backing/ holds each device's record of what
	// its handler opened (backstore_config::identity_record). systemd's
	// StateDirectory=tcmud makes it.
	std::filesystem::path state = "/var/lib/tcmud";
};

} // namespace tcmud
