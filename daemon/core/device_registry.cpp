// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/device_registry.h"

#include <cerrno>
#include <cstring>

#include "log/log.h"

namespace tcmud {

device_registry::device_registry(device_roots roots, device_options opts)
	: roots_(std::move(roots)), opts_(opts)
{
}

device_registry::~device_registry()
{
	remove_all();
}

size_t device_registry::scan()
{
	std::vector<discovery_skip> skipped;
	for (const uio_device_info &info : discover_tcmu_devices(roots_, &skipped))
		if (!devices_.count(info.minor))
			add_scanned(info);
	for (const discovery_skip &s : skipped)
		log_warn("", "%s: skipped: %s", s.uio.c_str(), s.error.what().c_str());
	return devices_.size();
}

void device_registry::add_scanned(const uio_device_info &info)
{
	tcmu_configfs cfg(roots_, info.name.hba, info.name.device);
	// Unreadable enable: assume a served device, the common case.
	if (auto enabled = cfg.enabled(); !enabled || *enabled) {
		add_device(info, ring_origin::take_over);
		return;
	}
	// Never served: its ring is fresh, no take-over. Answer even a failure,
	// or the configfs write that created it never returns.
	int rc = add_device(info, ring_origin::fresh);
	std::string name = info.name.subtype + "/" + info.name.device;
	auto index = cfg.device_index();
	if (!index) {
		log_error("", "%s: waits for a daemon's reply but its device index is unreadable: %s",
			  name.c_str(), index.error().what().c_str());
		return;
	}
	log_info("", "%s: created while no daemon ran; %s and answering its enable", name.c_str(),
		 rc == 0 ? "serving it" : "refusing it");
	if (answer_missed_add_)
		answer_missed_add_(*index, name, rc);
}

int device_registry::add(uint32_t minor)
{
	if (devices_.count(minor))
		return 0;
	std::string uio = "uio" + std::to_string(minor);
	auto info = read_uio_device(roots_, uio);
	if (!info) {
		log_error("", "%s: not a usable tcm-user device: %s", uio.c_str(),
			  info.error().what().c_str());
		return info.error().negative_errno();
	}
	return add_device(*info, ring_origin::fresh);
}

int device_registry::add_device(const uio_device_info &info, ring_origin origin)
{
	// The open may wait for a previous holder, of the uio node and then of
	// the backing store.
	if (busy_notice_)
		busy_notice_(2 * uint64_t(previous_holder_wait_ms) + 10'000);
	auto dev = tcmu_device::open(roots_, info, opts_, origin);
	if (!dev)
		return dev.error().negative_errno();
	std::lock_guard lock(mutex_);
	devices_.emplace(info.minor, std::move(*dev));
	return 0;
}

int device_registry::remove(uint32_t minor)
{
	std::unique_ptr<tcmu_device> dev;
	{
		std::lock_guard lock(mutex_);
		auto it = devices_.find(minor);
		if (it == devices_.end())
			return 0;
		dev = std::move(it->second);
		devices_.erase(it);
	}
	std::string prefix = dev->log_prefix();
	log_debug(prefix, "removing");
	// Its queues drain at once, each up to the drain timeout.
	if (busy_notice_)
		busy_notice_(uint64_t(default_drain_timeout_ms) + 10'000);
	dev->stop();
	dev.reset();
	log_info(prefix, "released");
	return 0;
}

void device_registry::for_each_queue(
	const std::function<void(const tcmu_device &, queue_worker &)> &fn) const
{
	std::lock_guard lock(mutex_);
	for (const auto &[minor, dev] : devices_)
		for (const auto &q : dev->queues())
			fn(*dev, *q);
}

void device_registry::remove_all()
{
	while (!devices_.empty())
		remove(devices_.begin()->first);
}

} // namespace tcmud
