// SPDX-License-Identifier: GPL-2.0-or-later
#include "stats/snapshot_delta.h"

namespace tcmud::stats {
namespace {

uint64_t minus(uint64_t after, uint64_t before)
{
	return after >= before ? after - before : after;
}

} // namespace

queue_snapshot difference(const queue_snapshot &before, const queue_snapshot &after)
{
	// One counter going backwards is enough to know the queue was
	// re-created: then every counter restarts, the histogram with them.
	bool restarted = after.commands < before.commands || after.doorbells < before.doorbells;
	if (restarted)
		return after;
	queue_snapshot d;
	d.commands = minus(after.commands, before.commands);
	d.bytes_read = minus(after.bytes_read, before.bytes_read);
	d.bytes_written = minus(after.bytes_written, before.bytes_written);
	d.errors = minus(after.errors, before.errors);
	d.malformed = minus(after.malformed, before.malformed);
	d.doorbells = minus(after.doorbells, before.doorbells);
	d.tmrs = minus(after.tmrs, before.tmrs);
	d.aborted = minus(after.aborted, before.aborted);
	d.ring_resets = minus(after.ring_resets, before.ring_resets);
	d.stale_results = minus(after.stale_results, before.stale_results);
	d.depth = after.depth;
	d.max_depth = after.max_depth;
	for (size_t i = 0; i < d.sense_keys.size(); ++i)
		d.sense_keys[i] = minus(after.sense_keys[i], before.sense_keys[i]);
	for (size_t i = 0; i < d.latency.size(); ++i)
		d.latency[i] = minus(after.latency[i], before.latency[i]);
	return d;
}

queue_snapshot sum(std::span<const queue_snapshot> queues)
{
	queue_snapshot t;
	for (const queue_snapshot &q : queues) {
		t.commands += q.commands;
		t.bytes_read += q.bytes_read;
		t.bytes_written += q.bytes_written;
		t.errors += q.errors;
		t.malformed += q.malformed;
		t.doorbells += q.doorbells;
		t.tmrs += q.tmrs;
		t.aborted += q.aborted;
		t.ring_resets += q.ring_resets;
		t.stale_results += q.stale_results;
		t.depth += q.depth;
		t.max_depth += q.max_depth;
		for (size_t i = 0; i < t.sense_keys.size(); ++i)
			t.sense_keys[i] += q.sense_keys[i];
		for (size_t i = 0; i < t.latency.size(); ++i)
			t.latency[i] += q.latency[i];
	}
	return t;
}

interval_rates rates(const queue_snapshot &before, const queue_snapshot &after,
		     uint64_t interval_ns)
{
	queue_snapshot d = difference(before, after);
	interval_rates r;
	r.seconds = double(interval_ns) / 1e9;
	if (r.seconds > 0) {
		r.iops = double(d.commands) / r.seconds;
		r.read_bytes_per_s = double(d.bytes_read) / r.seconds;
		r.write_bytes_per_s = double(d.bytes_written) / r.seconds;
	}
	r.commands = d.commands;
	r.errors = d.errors;
	r.malformed = d.malformed;
	r.ring_resets = d.ring_resets;
	r.stale_results = d.stale_results;
	r.p50_ns = latency_quantile(d.latency, 0.50);
	r.p99_ns = latency_quantile(d.latency, 0.99);
	r.p999_ns = latency_quantile(d.latency, 0.999);
	r.depth = d.depth;
	r.max_depth = d.max_depth;
	return r;
}

} // namespace tcmud::stats
