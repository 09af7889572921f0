// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/device_reports.h"

#include <string>

namespace tcmud {

std::vector<control::device_report> device_reports(const device_registry &devices,
						   bool with_stats)
{
	std::vector<control::device_report> out;
	out.reserve(devices.size());
	for (const auto &[minor, dev] : devices.devices()) {
		control::device_report r;
		const uio_device_info &info = dev->info();
		r.name = info.name.device;
		r.hba = "user_" + std::to_string(info.name.hba);
		r.uio = info.uio;
		r.subtype = info.name.subtype;
		r.cfgstring = info.name.cfgstring;
		// A device is in the registry only while its queues are served;
		// the backstore may say more (rbd: whether it holds the lock).
		backstore_status st = dev->backstore_status();
		r.state = std::move(st.state);
		r.lock_owner = std::move(st.lock_owner);
		r.lock_owner_is_us = st.lock_owner_is_us;
		r.reopens = st.reopens;
		r.size_bytes = dev->size_bytes();
		r.block_size = dev->block_size();
		r.nr_queues = uint32_t(dev->queues().size());
		if (!dev->queues().empty()) {
			r.max_in_flight = dev->queues().front()->max_in_flight();
			r.uring_entries = dev->queues().front()->uring_entries();
		}
		if (with_stats)
			for (const auto &q : dev->queues()) {
				r.queues.push_back(q->stats().snapshot());
				r.queues.back().fixed_buffers = q->data_area_registered() ? 1 : 0;
			}
		out.push_back(std::move(r));
	}
	return out;
}

} // namespace tcmud
