// SPDX-License-Identifier: GPL-2.0-or-later
// The latency histogram's buckets and percentiles.
#include <catch2/catch.hpp>

#include "stats/latency_histogram.h"

using namespace tcmud::stats;

TEST_CASE("latency histogram: every value lands in a bucket whose bounds hold it, at most 12.5% wide")
{
	REQUIRE(latency_bucket(0) == 0);
	REQUIRE(latency_bucket(1023) == 0);
	REQUIRE(latency_bucket(1024) == 1);
	REQUIRE(latency_bucket(uint64_t(1) << 36) == latency_buckets - 1);
	REQUIRE(latency_bucket(UINT64_MAX) == latency_buckets - 1);
	size_t last = 0;
	for (uint64_t v = 1000; v < (uint64_t(1) << 36); v += v / 37 + 1) {
		size_t b = latency_bucket(v);
		INFO("value " << v << " bucket " << b);
		REQUIRE(b >= last); // monotonic
		last = b;
		REQUIRE(latency_bucket_low(b) <= v);
		REQUIRE(v <= latency_bucket_high(b));
		if (b > 0)
			REQUIRE(double(latency_bucket_high(b) - latency_bucket_low(b) + 1) <=
				0.125 * double(latency_bucket_low(b)) + 0.5);
	}
	// Adjacent buckets tile the range without gaps.
	for (size_t b = 0; b + 2 < latency_buckets; ++b)
		REQUIRE(latency_bucket_high(b) + 1 == latency_bucket_low(b + 1));
}

TEST_CASE("latency histogram: percentiles of 1..1000 us are within one bucket above the exact value")
{
	latency_counts counts{};
	for (uint64_t us = 1; us <= 1000; ++us)
		++counts[latency_bucket(us * 1000)];
	auto near = [&](double q, uint64_t exact_ns) {
		uint64_t got = latency_quantile(counts, q);
		INFO("q " << q << " got " << got << " exact " << exact_ns);
		REQUIRE(got >= exact_ns);
		REQUIRE(double(got) <= double(exact_ns) * 1.125 + 1);
	};
	near(0.50, 500'000);
	near(0.99, 990'000);
	near(0.999, 999'000);
	near(1.0, 1'000'000);
	REQUIRE(latency_quantile(counts, 0.0) == latency_bucket_high(latency_bucket(1000)));
}

TEST_CASE("latency histogram: p99 of 99 fast and 1 slow command is still fast, p99.9 the slow one")
{
	latency_counts counts{};
	counts[latency_bucket(20'000)] = 99;
	counts[latency_bucket(5'000'000'000)] = 1;
	REQUIRE(latency_quantile(counts, 0.99) == latency_bucket_high(latency_bucket(20'000)));
	REQUIRE(latency_quantile(counts, 0.999) ==
		latency_bucket_high(latency_bucket(5'000'000'000)));
	latency_counts none{};
	REQUIRE(latency_quantile(none, 0.5) == 0);
}
