// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/worker_watchdog.h"

#include <chrono>

#include "config/sd_notify.h"
#include "log/log.h"
#include "stats/monotonic_clock.h"

namespace tcmud {

// Two ticks per interval, as sd_watchdog_enabled(3) advises: one missed
// ping is a stalled worker, not a slow clock.
worker_watchdog::worker_watchdog(uint64_t interval_usec, const device_registry &devices)
	: devices_(devices), tick_ns_(interval_usec * 1000 / 2), control_seen_ns_(monotonic_ns())
{
	if (enabled())
		thread_ = std::thread([this] { run(); });
}

worker_watchdog::~worker_watchdog()
{
	{
		std::lock_guard lock(mutex_);
		stopping_ = true;
	}
	wake_.notify_all();
	if (thread_.joinable())
		thread_.join();
}

int worker_watchdog::poll_timeout_ms() const
{
	return enabled() ? int(tick_ns_ / 1'000'000) : -1;
}

void worker_watchdog::control_loop_ran()
{
	control_seen_ns_.store(monotonic_ns(), std::memory_order_release);
}

void worker_watchdog::control_busy_for(uint64_t ms)
{
	uint64_t now = monotonic_ns();
	control_seen_ns_.store(now, std::memory_order_release);
	control_busy_until_ns_.store(now + ms * 1'000'000, std::memory_order_release);
}

void worker_watchdog::run()
{
	std::unique_lock lock(mutex_);
	while (!stopping_) {
		lock.unlock();
		tick();
		lock.lock();
		wake_.wait_for(lock, std::chrono::nanoseconds(tick_ns_), [this] { return stopping_; });
	}
}

unsigned worker_watchdog::tick()
{
	unsigned silent = 0;
	devices_.for_each_queue([&](const tcmu_device &dev, queue_worker &q) {
		if (q.probe_alive())
			return;
		if (!warned_)
			log_error(dev.log_prefix(), "queue %u: its worker has not run for %llu ms: no "
				  "watchdog ping", q.queue_index(),
				  (unsigned long long)(tick_ns_ / 1'000'000));
		++silent;
	});
	// The control loop comes round every tick (poll_timeout_ms); two
	// missed, outside a step it announced, is a hung loop.
	const uint64_t now = monotonic_ns();
	const uint64_t seen = control_seen_ns_.load(std::memory_order_acquire);
	const bool control_ok = now - seen <= 3 * tick_ns_ ||
				now < control_busy_until_ns_.load(std::memory_order_acquire);
	if (!control_ok && !warned_)
		log_error("", "the control loop has not run for %llu ms: no watchdog ping",
			  (unsigned long long)((now - seen) / 1'000'000));
	warned_ = silent > 0 || !control_ok;
	if (!warned_)
		sd_notify_state("WATCHDOG=1");
	return silent;
}

} // namespace tcmud
