// SPDX-License-Identifier: GPL-2.0-or-later
// The maths tcmudctl does on two snapshots.
#include <catch2/catch.hpp>

#include <vector>

#include "stats/snapshot_delta.h"

using namespace tcmud::stats;

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
