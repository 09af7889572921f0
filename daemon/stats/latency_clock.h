// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The clock behind the per-command latency histogram. A queue worker reads it
// twice per round: when it fetches a batch from the ring and when it
// publishes the answers. Where the kernel keeps time with the TSC itself
// (current clocksource "tsc": constant rate, synchronised across CPUs, or
// the kernel would have switched away from it), the TSC is read directly,
// one instruction where clock_gettime()'s vDSO path is ~60 in a guest.
// Elsewhere, or if calibration fails, ticks are CLOCK_MONOTONIC
// nanoseconds. Ticks are only subtracted from each other and the difference
// converted; a latency is a statistic, never a deadline, so a TSC that the
// kernel later marks unstable skews the histogram and nothing else.
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "stats/monotonic_clock.h"

namespace tcmud {

// 64 x 32.32 fixed-point products (x86-64's mul gives the 128 bits).
__extension__ typedef unsigned __int128 latency_clock_wide;

class latency_clock {
public:
	// Chooses the source; once per process (later calls return at once).
	// Every queue worker calls it before its thread starts, so its reads
	// below happen after it.
	static void calibrate();
	// The TSC half of calibrate(), whatever the kernel's clocksource: true
	// if now() reads the TSC afterwards. For tests, single-threaded.
	static bool calibrate_tsc();

	static uint64_t now()
	{
#if defined(__x86_64__)
		if (use_tsc_)
			return __rdtsc();
#endif
		return monotonic_ns();
	}
	// A difference of two now() values in nanoseconds.
	static uint64_t to_ns(uint64_t ticks)
	{
		return uint64_t((static_cast<latency_clock_wide>(ticks) * ns_per_tick_) >> 32);
	}
	// What calibrate() chose, for the log.
	static bool uses_tsc() { return use_tsc_; }
	static double ticks_per_ns() { return double(uint64_t(1) << 32) / double(ns_per_tick_); }

private:
	static inline bool use_tsc_ = false;
	// Nanoseconds per tick, 32.32 fixed point (1.0 for the monotonic clock).
	static inline uint64_t ns_per_tick_ = uint64_t(1) << 32;
};

} // namespace tcmud
