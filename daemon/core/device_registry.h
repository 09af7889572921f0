// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Every TCMU device this daemon serves, keyed by uio minor. Changed from the
// control thread only (start-up scan, netlink events, shutdown); the data
// path never looks here. The watchdog's thread probes the workers through
// for_each_queue, under the registry's lock; a device being removed leaves
// the map first, so its slow drain holds no lock.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/tcmu_device.h"
#include "device/device_roots.h"

namespace tcmud {

class device_registry {
public:
	device_registry(device_roots roots, device_options opts);
	~device_registry();

	// Serves every tcm-user device that exists now: an enabled one is taken
	// over (ring reset: see tcmu_device::take_over); one still inside its
	// configfs enable (created while no daemon ran: the kernel waits for an
	// ADDED_DEVICE reply it sent to nobody) is opened fresh and that reply
	// is sent through answer_missed_add. Returns how many are served;
	// devices that fail are logged and skipped.
	size_t scan();
	// (LIO device index, device name, 0 or -errno) -> sends the reply.
	using missed_add_answer = std::function<void(uint32_t, const std::string &, int)>;
	void set_missed_add_answer(missed_add_answer answer) { answer_missed_add_ = std::move(answer); }
	// A device appeared (netlink ADDED_DEVICE). 0, or -errno to refuse it.
	int add(uint32_t minor);
	// A device is going away (netlink REMOVED_DEVICE): in-flight commands
	// finish, then it is released. 0 also when it was not served.
	int remove(uint32_t minor);
	void remove_all();

	// Options for devices added from now on (a SIGHUP reload); devices
	// already served keep the rings they were opened with.
	void set_options(const device_options &opts) { opts_ = opts; }
	const device_options &options() const { return opts_; }

	size_t size() const { return devices_.size(); }
	// Control thread only.
	const std::map<uint32_t, std::unique_ptr<tcmu_device>> &devices() const { return devices_; }
	// Any thread: fn(device, worker) for every queue of every device served.
	void for_each_queue(const std::function<void(const tcmu_device &, queue_worker &)> &fn) const;
	// Called before a removal, with the most it may block the control
	// thread (ms): the watchdog's control_busy_for.
	using busy_notice = std::function<void(uint64_t)>;
	void set_busy_notice(busy_notice notice) { busy_notice_ = std::move(notice); }

private:
	int add_device(const uio_device_info &info, ring_origin origin);
	void add_scanned(const uio_device_info &info);

	device_roots roots_;
	device_options opts_;
	mutable std::mutex mutex_; // devices_' shape, against for_each_queue
	std::map<uint32_t, std::unique_ptr<tcmu_device>> devices_;
	missed_add_answer answer_missed_add_;
	busy_notice busy_notice_;
};

} // namespace tcmud
