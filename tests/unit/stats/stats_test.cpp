// SPDX-License-Identifier: GPL-2.0-or-later
// The latency histogram's buckets and percentiles, the single-writer queue
// counters, and the maths tcmudctl does on two snapshots.
#include <catch2/catch.hpp>

#include <vector>

#include "stats/latency_histogram.h"
#include "stats/queue_stats.h"
#include "stats/snapshot_delta.h"

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

TEST_CASE("queue stats: the worker's calls show up in a snapshot")
{
	queue_stats s;
	s.command_started(1);
	s.command_started(2);
	s.command_started(3);
	s.command_done(2, true, 4096, 0);
	s.command_done(1, true, 0, 8192);
	s.command_done(0, false, 0, 0);
	s.check_condition(0x3);
	s.check_condition(0x13); // only the low nibble is a sense key
	s.latency_ns(1500);
	s.latency_ns(1500);
	s.latency_ns(2'000'000);
	s.malformed_entry();
	s.doorbell();
	s.ring_reset_seen();
	s.ring_recovered();
	s.stale_result();
	queue_snapshot snap = s.snapshot();
	REQUIRE(snap.commands == 3);
	REQUIRE(snap.bytes_read == 4096);
	REQUIRE(snap.bytes_written == 8192);
	REQUIRE(snap.errors == 1);
	REQUIRE(snap.sense_keys[3] == 2);
	REQUIRE(snap.depth == 0);
	REQUIRE(snap.max_depth == 3);
	REQUIRE(snap.malformed == 1);
	REQUIRE(snap.doorbells == 1);
	REQUIRE(snap.ring_resets == 2);
	REQUIRE(snap.stale_results == 1);
	REQUIRE(snap.latency[latency_bucket(1500)] == 2);
	REQUIRE(snap.latency[latency_bucket(2'000'000)] == 1);
}

TEST_CASE("snapshot maths: IOPS, bandwidth and interval percentiles from two snapshots")
{
	queue_snapshot a, b;
	a.commands = 1000;
	a.bytes_read = 1 << 20;
	a.latency[latency_bucket(5'000'000)] = 1000; // old, slow commands
	b = a;
	b.commands = 3000;                        // +2000 in 2 s
	b.bytes_read = a.bytes_read + (8u << 20); // +8 MiB
	b.bytes_written = 4u << 20;
	b.errors = 3;
	b.depth = 7;
	b.max_depth = 32;
	b.latency[latency_bucket(100'000)] += 2000; // the interval's commands
	interval_rates r = rates(a, b, 2'000'000'000);
	REQUIRE(r.seconds == Approx(2.0));
	REQUIRE(r.iops == Approx(1000.0));
	REQUIRE(r.read_bytes_per_s == Approx(4.0 * 1048576));
	REQUIRE(r.write_bytes_per_s == Approx(2.0 * 1048576));
	REQUIRE(r.commands == 2000);
	REQUIRE(r.errors == 3);
	REQUIRE(r.depth == 7);
	REQUIRE(r.max_depth == 32);
	// Only the interval's commands count: the old 5 ms ones are gone.
	REQUIRE(r.p999_ns == latency_bucket_high(latency_bucket(100'000)));
}

TEST_CASE("snapshot maths: counters that went backwards (a re-created queue) count from zero")
{
	queue_snapshot a, b;
	a.commands = 5000;
	a.doorbells = 100;
	b.commands = 40;
	b.doorbells = 10;
	b.latency[latency_bucket(50'000)] = 40;
	interval_rates r = rates(a, b, 1'000'000'000);
	REQUIRE(r.commands == 40);
	REQUIRE(r.iops == Approx(40.0));
	REQUIRE(r.p50_ns == latency_bucket_high(latency_bucket(50'000)));
}

TEST_CASE("snapshot maths: a device is the sum of its queues")
{
	std::vector<queue_snapshot> q(2);
	q[0].commands = 10;
	q[0].depth = 2;
	q[0].max_depth = 5;
	q[0].latency[3] = 10;
	q[1].commands = 30;
	q[1].depth = 1;
	q[1].max_depth = 4;
	q[1].latency[3] = 30;
	q[1].sense_keys[5] = 2;
	q[0].ring_resets = 1;
	q[1].ring_resets = 2;
	q[1].stale_results = 3;
	queue_snapshot t = sum(q);
	REQUIRE(t.ring_resets == 3);
	REQUIRE(t.stale_results == 3);
	queue_snapshot later = q[1];
	later.commands += 5;
	later.ring_resets += 1;
	REQUIRE(difference(q[1], later).ring_resets == 1);
	REQUIRE(difference(q[1], later).stale_results == 0);
	REQUIRE(t.commands == 40);
	REQUIRE(t.depth == 3);
	REQUIRE(t.max_depth == 9);
	REQUIRE(t.latency[3] == 40);
	REQUIRE(t.sense_keys[5] == 2);
	REQUIRE(rates({}, {}, 0).iops == 0); // no interval, no division by zero
}
