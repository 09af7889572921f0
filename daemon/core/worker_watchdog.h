// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// systemd's watchdog (WatchdogSec= in tcmud.service): WATCHDOG=1 is sent
// only while every queue worker's loop answers its probes, so a hung worker
// gets the daemon restarted (and its devices taken over by the next one)
// instead of holding its queue's I/O forever. Control thread only.
#include <cstdint>

#include "core/device_registry.h"

namespace tcmud {

class worker_watchdog {
public:
	// interval_usec: systemd's WATCHDOG_USEC; 0 turns the watchdog off.
	explicit worker_watchdog(uint64_t interval_usec);

	bool enabled() const { return tick_ns_ != 0; }
	// For poll(): ms until the next tick, -1 when off.
	int poll_timeout_ms() const;
	// Call after every poll(). At each tick (half the interval): probes
	// every worker; pings systemd if each answered the previous probe.
	// Returns how many workers had not answered (0 at a ping).
	unsigned tick(const device_registry &devices);

private:
	uint64_t tick_ns_ = 0;
	uint64_t next_ns_ = 0;
	bool warned_ = false;
};

} // namespace tcmud
