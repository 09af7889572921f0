// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/worker_watchdog.h"

#include "config/sd_notify.h"
#include "log/log.h"
#include "stats/monotonic_clock.h"

namespace tcmud {

// Two ticks per interval, as sd_watchdog_enabled(3) advises: one missed
// ping is a stalled worker, not a slow clock.
worker_watchdog::worker_watchdog(uint64_t interval_usec)
	: tick_ns_(interval_usec * 1000 / 2), next_ns_(monotonic_ns())
{
}

int worker_watchdog::poll_timeout_ms() const
{
	if (!enabled())
		return -1;
	uint64_t now = monotonic_ns();
	return now >= next_ns_ ? 0 : int((next_ns_ - now + 999'999) / 1'000'000);
}

unsigned worker_watchdog::tick(const device_registry &devices)
{
	if (!enabled())
		return 0;
	const uint64_t now = monotonic_ns();
	if (now < next_ns_)
		return 0;
	next_ns_ = now + tick_ns_;
	unsigned silent = 0;
	for (const auto &[minor, dev] : devices.devices()) {
		for (const auto &q : dev->queues()) {
			if (q->probe_alive())
				continue;
			if (!warned_)
				log_error(dev->log_prefix(), "queue %u: its worker has not run for "
					  "%llu ms: no watchdog ping", q->queue_index(),
					  (unsigned long long)(tick_ns_ / 1'000'000));
			++silent;
		}
	}
	warned_ = silent > 0;
	if (!silent)
		sd_notify_state("WATCHDOG=1");
	return silent;
}

} // namespace tcmud
