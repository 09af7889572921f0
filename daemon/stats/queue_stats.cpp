// SPDX-License-Identifier: GPL-2.0-or-later
#include "stats/queue_stats.h"

namespace tcmud::stats {

queue_snapshot queue_stats::snapshot() const
{
	constexpr auto relaxed = std::memory_order_relaxed;
	queue_snapshot s;
	s.commands = commands.load(relaxed);
	s.bytes_read = bytes_read.load(relaxed);
	s.bytes_written = bytes_written.load(relaxed);
	s.errors = errors.load(relaxed);
	s.malformed = malformed.load(relaxed);
	s.doorbells = doorbells.load(relaxed);
	s.tmrs = tmrs.load(relaxed);
	s.aborted = aborted.load(relaxed);
	s.ring_resets = ring_resets.load(relaxed);
	s.stale_results = stale_results.load(relaxed);
	s.depth = depth.load(relaxed);
	s.max_depth = max_depth.load(relaxed);
	for (size_t i = 0; i < s.sense_keys.size(); ++i)
		s.sense_keys[i] = sense_keys[i].load(relaxed);
	for (size_t i = 0; i < s.latency.size(); ++i)
		s.latency[i] = latency[i].load(relaxed);
	s.latency_sum_ns = latency_sum_ns.load(relaxed);
	return s;
}

} // namespace tcmud::stats
