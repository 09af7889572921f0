// SPDX-License-Identifier: GPL-2.0-or-later
// latency_clock against CLOCK_MONOTONIC over the same interval: whichever
// source it chose on this machine (the TSC where the kernel's clocksource is
// the TSC), a difference of its ticks must convert to the nanoseconds that
// passed.
#include <time.h>

#include <catch2/catch.hpp>

#include <cstdint>

#include "stats/latency_clock.h"

using tcmud::latency_clock;

namespace {

void check_against_monotonic()
{
	INFO("source: " << (latency_clock::uses_tsc() ? "tsc" : "monotonic") << ", "
			<< latency_clock::ticks_per_ns() << " ticks per ns");
	for (int round = 0; round < 3; ++round) {
		uint64_t outer0 = tcmud::monotonic_ns();
		uint64_t t0 = latency_clock::now();
		uint64_t inner0 = tcmud::monotonic_ns();
		timespec gap{0, 20'000'000};
		nanosleep(&gap, nullptr);
		uint64_t inner1 = tcmud::monotonic_ns();
		uint64_t t1 = latency_clock::now();
		uint64_t outer1 = tcmud::monotonic_ns();
		REQUIRE(t1 > t0);
		uint64_t ns = latency_clock::to_ns(t1 - t0);
		INFO("round " << round << ": " << ns << " ns by latency_clock, between "
			      << inner1 - inner0 << " and " << outer1 - outer0 << " by CLOCK_MONOTONIC");
		// Between the inner and the outer interval, give or take 1 % for
		// the calibration's rate error.
		CHECK(ns >= (inner1 - inner0) * 99 / 100);
		CHECK(ns <= (outer1 - outer0) * 101 / 100);
	}
}

} // namespace

TEST_CASE("latency_clock: ticks convert to the nanoseconds CLOCK_MONOTONIC saw")
{
	// The source the kernel's clocksource picks, then the TSC whatever it
	// is (on this machine's kvm-clock host the first is the fallback).
	latency_clock::calibrate();
	latency_clock::calibrate(); // once per process: the second is a no-op
	check_against_monotonic();
#if defined(__x86_64__)
	REQUIRE(latency_clock::calibrate_tsc());
	REQUIRE(latency_clock::uses_tsc());
	check_against_monotonic();
#endif
}

TEST_CASE("latency_clock: to_ns of a day's ticks does not overflow")
{
	latency_clock::calibrate();
	uint64_t day_ns = 86'400ull * 1'000'000'000ull;
	double ticks = double(day_ns) * latency_clock::ticks_per_ns();
	uint64_t back = latency_clock::to_ns(uint64_t(ticks));
	CHECK(back >= day_ns * 999 / 1000);
	CHECK(back <= day_ns * 1001 / 1000);
}
