// SPDX-License-Identifier: GPL-2.0-or-later
#include "stats/latency_clock.h"

#include <fstream>
#include <mutex>
#include <string>

namespace tcmud {
namespace {

bool kernel_keeps_time_with_tsc()
{
	std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
	std::string name;
	return f >> name && name == "tsc";
}

#if defined(__x86_64__)
// A (TSC, CLOCK_MONOTONIC) pair read as close together as the scheduler lets
// us: of a few tries, the one whose TSC reads bracket the clock read
// tightest, its TSC value taken at the bracket's middle.
struct clock_pair {
	uint64_t tsc;
	uint64_t ns;
};

clock_pair read_pair()
{
	clock_pair best{};
	uint64_t best_width = UINT64_MAX;
	for (int i = 0; i < 8; ++i) {
		uint64_t before = __rdtsc();
		uint64_t ns = monotonic_ns();
		uint64_t after = __rdtsc();
		if (after >= before && after - before < best_width) {
			best_width = after - before;
			best = {before + (after - before) / 2, ns};
		}
	}
	return best;
}
#endif

} // namespace

void latency_clock::calibrate()
{
	static std::once_flag once;
	std::call_once(once, [] {
		if (kernel_keeps_time_with_tsc())
			calibrate_tsc();
	});
}

bool latency_clock::calibrate_tsc()
{
#if defined(__x86_64__)
	// 10 ms apart: a clock read's ~100 ns of uncertainty is 1e-5.
	clock_pair a = read_pair();
	timespec gap{0, 10'000'000};
	nanosleep(&gap, nullptr);
	clock_pair b = read_pair();
	if (b.tsc <= a.tsc || b.ns <= a.ns)
		return false;
	uint64_t ratio =
		uint64_t((static_cast<latency_clock_wide>(b.ns - a.ns) << 32) / (b.tsc - a.tsc));
	if (ratio == 0)
		return false;
	ns_per_tick_ = ratio;
	use_tsc_ = true;
	return true;
#else
	return false;
#endif
}

} // namespace tcmud
