// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Finding TCMU devices among the UIO devices in sysfs:
//   <sysfs>/class/uio/uioN/name          tcm-user/<hba>/<dev>/<subtype>/<cfg>
//   <sysfs>/class/uio/uioN/version       the mailbox version, "2"
//   <sysfs>/class/uio/uioN/maps/map0/size    "0x..." bytes to mmap
//   <sysfs>/class/uio/uioN/maps/map0/offset  "0x..." offset within the page
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "device/device_roots.h"
#include "device/uio_name.h"
#include "tcmud/setup_result.h"

namespace tcmud {

struct uio_device_info {
	std::string uio;     // "uio3": the sysfs and /dev name
	uint32_t minor = 0;  // 3: what TCMU netlink events carry
	tcmu_uio_name name;
	std::string version;
	uint64_t map_size = 0;
	uint64_t map_offset = 0;
};

// Reads one UIO device (at set-up: discovery, a netlink ADDED_DEVICE).
// ENODEV when it is not a TCMU device, EINVAL when its attributes make no
// sense, the errno when they cannot be read (a device being removed
// disappears between the directory listing and the read).
setup_result<uio_device_info> read_uio_device(const device_roots &roots, std::string_view uio);

struct discovery_skip {
	std::string uio;
	setup_error error; // as read_uio_device returned it, never ENODEV
};

// The uio device of queue `queue` (>= 1) of the multi-queue device `dev`
// (named tcmu-queue/<hba>/<dev>/<queue>). Its name is dev's name. ENOENT
// when no such uio device exists, the errno when it cannot be read.
setup_result<uio_device_info> find_queue_uio_device(const device_roots &roots,
						    const uio_device_info &dev, uint32_t queue);

// Every TCMU device, sorted by minor. UIO devices of other drivers are
// ignored; TCMU ones that could not be read are listed in `skipped`.
std::vector<uio_device_info> discover_tcmu_devices(const device_roots &roots,
						   std::vector<discovery_skip> *skipped = nullptr);

} // namespace tcmud
