// SPDX-License-Identifier: GPL-2.0-or-later
// The single-writer queue counters, as a snapshot sees them.
#include <catch2/catch.hpp>

#include "stats/queue_stats.h"

using namespace tcmud::stats;

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
	s.latency_ns(1000, 0); // a batch of none adds nothing
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
	REQUIRE(snap.latency_sum_ns == 1500 + 1500 + 2'000'000);
	REQUIRE(snap.latency[latency_bucket(2'000'000)] == 1);
}
