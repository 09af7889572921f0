// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The three file-system roots device code reads. Injected everywhere, so unit
// tests point them at a fake tree in a temporary directory (as libnvme's
// tests do with recorded sysfs trees) and never need the kernel modules.
#include <filesystem>

namespace tcmud {

struct device_roots {
	std::filesystem::path sysfs = "/sys";
	std::filesystem::path configfs = "/sys/kernel/config";
	std::filesystem::path dev = "/dev";
};

} // namespace tcmud
