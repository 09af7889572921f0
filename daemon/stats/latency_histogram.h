// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Bucket maths of the per-queue latency histogram.
//
// Log-linear buckets, as HdrHistogram does it with few buckets: every power
// of two from 1 µs (2^10 ns) to ~69 s (2^36 ns) is split into 8 equal
// buckets, so a bucket is at most 12.5% of its value wide. Bucket 0 holds
// everything under 1 µs, the last one everything from 2^36 ns on. The
// recording side is one index computation (a count-leading-zeros and two
// shifts), so the worker thread can afford it per command.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace tcmud::stats {

inline constexpr unsigned latency_sub_bits = 3;          // 8 buckets per octave
inline constexpr unsigned latency_min_shift = 10;        // 1024 ns
inline constexpr unsigned latency_max_shift = 36;        // 68.7 s
inline constexpr size_t latency_buckets =
	1 + (latency_max_shift - latency_min_shift) * (1u << latency_sub_bits) + 1;

constexpr size_t latency_bucket(uint64_t ns)
{
	if (ns < (uint64_t(1) << latency_min_shift))
		return 0;
	unsigned msb = 63u - unsigned(std::countl_zero(ns));
	if (msb >= latency_max_shift)
		return latency_buckets - 1;
	uint64_t sub = (ns >> (msb - latency_sub_bits)) & ((1u << latency_sub_bits) - 1);
	return 1 + size_t(msb - latency_min_shift) * (1u << latency_sub_bits) + size_t(sub);
}

// The smallest value that falls in bucket i.
constexpr uint64_t latency_bucket_low(size_t i)
{
	if (i == 0)
		return 0;
	if (i >= latency_buckets - 1)
		return uint64_t(1) << latency_max_shift;
	size_t octave = (i - 1) >> latency_sub_bits;
	uint64_t sub = (i - 1) & ((1u << latency_sub_bits) - 1);
	unsigned msb = latency_min_shift + unsigned(octave);
	return ((uint64_t(1) << latency_sub_bits) + sub) << (msb - latency_sub_bits);
}

// The largest value that falls in bucket i (the last bucket is open-ended:
// its low bound is what we can say).
constexpr uint64_t latency_bucket_high(size_t i)
{
	if (i >= latency_buckets - 1)
		return latency_bucket_low(i);
	return latency_bucket_low(i + 1) - 1;
}

using latency_counts = std::array<uint64_t, latency_buckets>;

// The q-quantile (0 < q <= 1) of the recorded values, reported as the upper
// bound of the bucket holding the ceil(q * total)-th smallest value, so the
// true value is never above what we report (by at most one bucket's width).
// 0 when nothing was recorded.
uint64_t latency_quantile(std::span<const uint64_t, latency_buckets> counts, double q);

} // namespace tcmud::stats
