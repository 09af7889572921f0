// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// CLOCK_MONOTONIC in nanoseconds: the one clock for idle timeouts, watchdog
// ticks and (where the TSC is not the kernel's clocksource) latencies. Never
// stepped by settimeofday() or NTP, so an interval measured with it cannot
// go negative.
#include <time.h>

#include <cstdint>

namespace tcmud {

inline uint64_t monotonic_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

} // namespace tcmud
