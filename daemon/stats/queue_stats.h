// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A queue's statistics: written by its worker thread only, read by anyone.
//
// Every counter has exactly one writer, so it is bumped with a relaxed load
// and a relaxed store (a plain add on x86 and arm64, no locked instruction
// and no cache line shared with another queue); readers load each counter
// relaxed. A snapshot is therefore exact per counter but not one instant
// across counters: commands and the latency histogram may differ by the
// commands completing while it is taken, which for rates over seconds is
// noise. No queue shares anything with another: the control socket sums
// snapshots, the data path never does.
#include <array>
#include <atomic>
#include <cstdint>

#include "stats/latency_histogram.h"

namespace tcmud::stats {

// A plain copy of the counters at one moment.
struct queue_snapshot {
	uint64_t commands = 0;       // completed
	uint64_t bytes_read = 0;     // data-in returned by good commands
	uint64_t bytes_written = 0;  // data-out taken by good commands
	uint64_t errors = 0;         // completed with other than GOOD
	uint64_t malformed = 0;      // entries refused by the ring checks
	uint64_t doorbells = 0;      // completion batches handed to the kernel
	uint64_t tmrs = 0;           // task management entries seen
	uint64_t aborted = 0;        // commands a TMR named while in flight
	uint64_t ring_resets = 0;    // ring resets: ours after a broken ring, or the kernel's
	uint64_t stale_results = 0;  // results of commands from before a reset, dropped
	uint64_t depth = 0;          // commands in flight now
	uint64_t max_depth = 0;      // most commands in flight at once
	// 1 if the queue's data area is registered as io_uring fixed buffers:
	// a fact the report adds (queue_worker), not a counter of the stats.
	uint64_t fixed_buffers = 0;
	std::array<uint64_t, 16> sense_keys{}; // CHECK CONDITIONs by sense key
	latency_counts latency{};    // entry fetched -> completion published, ns
	uint64_t latency_sum_ns = 0; // the sum of those latencies (Prometheus _sum)
};

class queue_stats {
public:
	// --- the worker thread only ---
	void command_started(uint64_t depth_now)
	{
		depth.store(depth_now, std::memory_order_relaxed);
		if (depth_now > max_depth.load(std::memory_order_relaxed))
			max_depth.store(depth_now, std::memory_order_relaxed);
	}
	void command_done(uint64_t depth_now, bool good, uint64_t in, uint64_t out)
	{
		depth.store(depth_now, std::memory_order_relaxed);
		bump(commands);
		if (good) {
			bump(bytes_read, in);
			bump(bytes_written, out);
		} else {
			bump(errors);
		}
	}
	void check_condition(uint8_t sense_key) { bump(sense_keys[sense_key & 0xf]); }
	// `count` commands that took `ns` each.
	void latency_ns(uint64_t ns, uint64_t count = 1)
	{
		bump(latency[latency_bucket(ns)], count);
		bump(latency_sum_ns, ns * count);
	}
	void malformed_entry() { bump(malformed); }
	// One TMR entry, naming `aborted_here` commands in flight on this queue.
	void task_management(uint64_t aborted_here)
	{
		bump(tmrs);
		bump(aborted, aborted_here);
	}
	void doorbell() { bump(doorbells); }
	// Ring resets: one this queue asked for after finding its ring broken,
	// or one the kernel did by itself (action/reset_ring) that we noticed.
	void ring_recovered() { bump(ring_resets); }
	void ring_reset_seen() { bump(ring_resets); }
	// A command finished after a ring reset: its result was dropped.
	void stale_result() { bump(stale_results); }

	// --- any thread ---
	queue_snapshot snapshot() const;

	std::atomic<uint64_t> commands{0};
	std::atomic<uint64_t> bytes_read{0};
	std::atomic<uint64_t> bytes_written{0};
	std::atomic<uint64_t> errors{0};
	std::atomic<uint64_t> malformed{0};
	std::atomic<uint64_t> doorbells{0};
	std::atomic<uint64_t> tmrs{0};
	std::atomic<uint64_t> aborted{0};
	std::atomic<uint64_t> ring_resets{0};
	std::atomic<uint64_t> stale_results{0};
	std::atomic<uint64_t> depth{0};
	std::atomic<uint64_t> max_depth{0};
	std::array<std::atomic<uint64_t>, 16> sense_keys{};
	std::array<std::atomic<uint64_t>, latency_buckets> latency{};
	std::atomic<uint64_t> latency_sum_ns{0};

private:
	// Single writer: no read-modify-write instruction is needed.
	static void bump(std::atomic<uint64_t> &c, uint64_t n = 1)
	{
		c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
	}
};

} // namespace tcmud::stats
