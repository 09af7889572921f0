// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// systemd's watchdog (WatchdogSec= in tcmud.service): WATCHDOG=1 is sent
// only while every queue worker's loop answers its probes and the control
// thread's loop runs, so a hung worker or control loop gets the daemon
// restarted (and its devices taken over by the next one) instead of
// holding I/O forever.
//
// The probes and pings run on a thread of their own. The control thread
// may legitimately block for long: removing a device with stuck I/O drains
// its queues for up to their drain timeout, longer than WatchdogSec, and a
// heartbeat ticking on that thread would get a healthy daemon killed and
// every LUN taken over. Before such a step the control thread says how long
// it may take (control_busy_for); a control loop silent past that is hung.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "core/device_registry.h"

namespace tcmud {

class worker_watchdog {
public:
	// interval_usec: systemd's WATCHDOG_USEC; 0 turns the watchdog off
	// (no thread). Probes the workers of `devices`, which must outlive it.
	worker_watchdog(uint64_t interval_usec, const device_registry &devices);
	~worker_watchdog();
	worker_watchdog(const worker_watchdog &) = delete;
	worker_watchdog &operator=(const worker_watchdog &) = delete;

	bool enabled() const { return tick_ns_ != 0; }
	// For the control loop's poll(): it must come round at least this often
	// (ms), -1 when off.
	int poll_timeout_ms() const;
	// Control thread, each round of its loop.
	void control_loop_ran();
	// Control thread, before a step that may block it up to ms.
	void control_busy_for(uint64_t ms);

	// One tick, as the thread runs it every half interval: probes every
	// worker; pings systemd if each answered the previous probe and the
	// control loop is not overdue. Returns how many workers had not
	// answered (0 at a ping). Public for tests.
	unsigned tick();

private:
	void run();

	const device_registry &devices_;
	uint64_t tick_ns_ = 0;
	bool warned_ = false;
	std::atomic<uint64_t> control_seen_ns_;
	std::atomic<uint64_t> control_busy_until_ns_{0};
	std::mutex mutex_;
	std::condition_variable wake_;
	bool stopping_ = false;
	std::thread thread_;
};

} // namespace tcmud
