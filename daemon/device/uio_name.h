// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The name a TCMU device gives its UIO device (tcmu_update_uio_info):
//   tcm-user/<hba>/<devname>/<subtype>/<cfgstring>
// where "<subtype>/<cfgstring>" is the device's dev_config as written to
// configfs. The cfgstring may itself contain '/' (a file path usually does);
// without dev_config the name ends after <devname>.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcmud {

struct tcmu_uio_name {
	uint32_t hba = 0;       // the LIO HBA index: configfs dir user_<hba>
	std::string device;     // configfs item name
	std::string subtype;    // selects the handler ("file", ...); may be empty
	std::string cfgstring;  // handler configuration; may be empty
};

// nullopt when `name` is not a tcm-user name or its parts could not be a
// configfs path component (empty, ".", "..", or an hba that is not a number).
std::optional<tcmu_uio_name> parse_uio_name(std::string_view name);

// The uio device of queue q > 0 of a multi-queue device (kmod/, docs/kmod.md):
//   tcmu-queue/<hba>/<devname>/<q>
// Queue 0 is the device's own tcm-user uio device.
struct tcmu_queue_uio_name {
	uint32_t hba = 0;
	std::string device;
	uint32_t queue = 0;
};

// nullopt unless `name` is exactly that form with q >= 1.
std::optional<tcmu_queue_uio_name> parse_queue_uio_name(std::string_view name);

// A single path component that cannot climb out of its directory.
bool is_safe_path_component(std::string_view s);

} // namespace tcmud
