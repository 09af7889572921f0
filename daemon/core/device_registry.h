// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Every TCMU device this daemon serves, keyed by uio minor. Called from the
// control thread only (start-up scan, netlink events, shutdown); the data
// path never looks here.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/tcmu_device.h"
#include "device/device_roots.h"

namespace tcmud {

class device_registry {
public:
	device_registry(device_roots roots, device_options opts);
	~device_registry();

	// Takes over every tcm-user device that exists now (ring reset: see
	// tcmu_device::take_over). Returns how many are served; devices that
	// fail are logged and skipped.
	size_t scan();
	// A device appeared (netlink ADDED_DEVICE). 0, or -errno to refuse it.
	int add(uint32_t minor);
	// A device is going away (netlink REMOVED_DEVICE): in-flight commands
	// finish, then it is released. 0 also when it was not served.
	int remove(uint32_t minor);
	void remove_all();

	size_t size() const { return devices_.size(); }
	const std::map<uint32_t, std::unique_ptr<tcmu_device>> &devices() const { return devices_; }

private:
	int add_device(const uio_device_info &info, bool takeover);

	device_roots roots_;
	device_options opts_;
	std::map<uint32_t, std::unique_ptr<tcmu_device>> devices_;
};

} // namespace tcmud
