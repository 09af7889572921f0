// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What happened between two snapshots of a queue (or of a device's queues
// summed): the rates tcmudctl shows.
#include <cstdint>
#include <span>

#include "stats/queue_stats.h"

namespace tcmud::stats {

struct interval_rates {
	double seconds = 0;
	double iops = 0;
	double read_bytes_per_s = 0;
	double write_bytes_per_s = 0;
	uint64_t commands = 0;   // completed in the interval
	uint64_t errors = 0;     // of those, not GOOD
	uint64_t malformed = 0;
	uint64_t ring_resets = 0;
	uint64_t stale_results = 0;
	// Latency percentiles of the commands completed in the interval, ns;
	// 0 when there were none.
	uint64_t p50_ns = 0;
	uint64_t p99_ns = 0;
	uint64_t p999_ns = 0;
	uint64_t depth = 0;      // at the end of the interval
	uint64_t max_depth = 0;  // since the queue started
};

// after - before per counter. A counter that went backwards means the queue
// was re-created in between (daemon restart, device removed and added), so
// `after` counts from zero and is taken as the whole difference.
queue_snapshot difference(const queue_snapshot &before, const queue_snapshot &after);

// A device's queues as one: counters and histograms add up; depth and
// max_depth are sums too (the device's max_depth is thus an upper bound of
// what was in flight at once: the queues may have peaked at different times).
queue_snapshot sum(std::span<const queue_snapshot> queues);

// Rates over `interval_ns` (the server's clock between the two snapshots).
interval_rates rates(const queue_snapshot &before, const queue_snapshot &after,
		     uint64_t interval_ns);

} // namespace tcmud::stats
