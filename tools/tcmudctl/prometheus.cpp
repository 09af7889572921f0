// SPDX-License-Identifier: GPL-2.0-or-later
#include "prometheus.h"

#include <cinttypes>
#include <cstdio>
#include <functional>

#include "stats/latency_histogram.h"

namespace tcmud::ctl {
namespace {

using stats::queue_snapshot;

struct family {
	const char *name;
	const char *type;
	const char *help;
	std::function<uint64_t(const queue_snapshot &)> value;
};

const family counters_and_gauges[] = {
	{"tcmud_commands_total", "counter", "SCSI commands completed.",
	 [](const queue_snapshot &s) { return s.commands; }},
	{"tcmud_read_bytes_total", "counter", "Data-in bytes returned by good commands.",
	 [](const queue_snapshot &s) { return s.bytes_read; }},
	{"tcmud_written_bytes_total", "counter", "Data-out bytes taken by good commands.",
	 [](const queue_snapshot &s) { return s.bytes_written; }},
	{"tcmud_command_errors_total", "counter", "Commands completed with a status other than GOOD.",
	 [](const queue_snapshot &s) { return s.errors; }},
	{"tcmud_malformed_entries_total", "counter", "Ring entries refused by the ring checks.",
	 [](const queue_snapshot &s) { return s.malformed; }},
	{"tcmud_doorbells_total", "counter", "Completion batches handed to the kernel.",
	 [](const queue_snapshot &s) { return s.doorbells; }},
	{"tcmud_task_management_total", "counter", "Task management (TMR) entries seen.",
	 [](const queue_snapshot &s) { return s.tmrs; }},
	{"tcmud_aborted_commands_total", "counter", "Commands a TMR named while they were in flight.",
	 [](const queue_snapshot &s) { return s.aborted; }},
	{"tcmud_ring_resets_total", "counter",
	 "Command ring resets: tcmud's own after finding the ring broken, or the kernel's (action/reset_ring).",
	 [](const queue_snapshot &s) { return s.ring_resets; }},
	{"tcmud_stale_results_total", "counter",
	 "Results of commands issued before a ring reset, dropped instead of answering a newer command.",
	 [](const queue_snapshot &s) { return s.stale_results; }},
	{"tcmud_queue_depth", "gauge", "Commands in flight now.",
	 [](const queue_snapshot &s) { return s.depth; }},
	{"tcmud_queue_max_depth", "gauge", "Most commands in flight at once since the device was opened.",
	 [](const queue_snapshot &s) { return s.max_depth; }},
	{"tcmud_queue_fixed_buffers", "gauge",
	 "1 if the queue's data area is registered as io_uring fixed buffers, else 0.",
	 [](const queue_snapshot &s) { return s.fixed_buffers; }},
};

void header(std::string &out, const char *name, const char *type, const char *help)
{
	out += "# HELP ";
	out += name;
	out += ' ';
	out += help;
	out += "\n# TYPE ";
	out += name;
	out += ' ';
	out += type;
	out += '\n';
}

std::string labels(const control::device_report &d, size_t q)
{
	return "device=\"" + prometheus_label_value(d.name) + "\",hba=\"" +
	       prometheus_label_value(d.hba) + "\",queue=\"" + std::to_string(q) + "\"";
}

void sample(std::string &out, const char *name, const std::string &lbl, const std::string &v)
{
	out += name;
	out += '{';
	out += lbl;
	out += "} ";
	out += v;
	out += '\n';
}

void sample(std::string &out, const char *name, const std::string &lbl, uint64_t v)
{
	sample(out, name, lbl, std::to_string(v));
}

// Exact decimal seconds ("0.000001023", "68.719476735"): a bucket bound
// must not move by rounding.
std::string seconds(uint64_t ns)
{
	char buf[48];
	std::snprintf(buf, sizeof(buf), "%" PRIu64 ".%09" PRIu64, ns / 1'000'000'000u,
		      ns % 1'000'000'000u);
	std::string s = buf;
	while (s.back() == '0')
		s.pop_back();
	if (s.back() == '.')
		s.pop_back();
	return s;
}

} // namespace

std::string prometheus_label_value(std::string_view v)
{
	std::string out;
	out.reserve(v.size());
	for (char c : v) {
		if (c == '\\')
			out += "\\\\";
		else if (c == '"')
			out += "\\\"";
		else if (c == '\n')
			out += "\\n";
		else
			out += c;
	}
	return out;
}

namespace {

// The states a device reports (control_protocol.h): one series each, 1 for
// the current one, so that a state that ends shows as a 0, not a gap.
const char *const device_states[] = {"serving", "owner", "standby", "lost", "fenced"};

std::string device_labels(const control::device_report &d)
{
	return "device=\"" + prometheus_label_value(d.name) + "\",hba=\"" +
	       prometheus_label_value(d.hba) + "\"";
}

void device_families(std::string &out, const control::control_reply &reply)
{
	header(out, "tcmud_build_info", "gauge",
	       "The daemon's version (from its control socket); always 1.");
	sample(out, "tcmud_build_info",
	       "version=\"" + prometheus_label_value(reply.version.empty() ? "unknown"
										: reply.version) +
		       "\"",
	       1);

	header(out, "tcmud_device_state", "gauge",
	       "1 for the device's current state: serving, or for rbd owner, standby, lost, fenced.");
	for (const control::device_report &d : reply.devices) {
		bool known = false;
		for (const char *st : device_states) {
			known |= d.state == st;
			sample(out, "tcmud_device_state",
			       device_labels(d) + ",state=\"" + st + "\"", d.state == st ? 1 : 0);
		}
		if (!known) // a newer daemon's state: shown, not dropped
			sample(out, "tcmud_device_state",
			       device_labels(d) + ",state=\"" + prometheus_label_value(d.state) +
				       "\"",
			       1);
	}

	header(out, "tcmud_device_lock_owner_info", "gauge",
	       "Who holds the medium's exclusive lock (rbd), as the cluster names them; "
	       "is_us=\"1\" on the gateway that holds it. Always 1.");
	for (const control::device_report &d : reply.devices)
		if (!d.lock_owner.empty())
			sample(out, "tcmud_device_lock_owner_info",
			       device_labels(d) + ",owner=\"" + prometheus_label_value(d.lock_owner) +
				       "\",is_us=\"" + (d.lock_owner_is_us ? "1" : "0") + "\"",
			       1);

	header(out, "tcmud_device_reopens_total", "counter",
	       "Times the backstore reconnected after the medium shut it out (rbd: blocklisted).");
	for (const control::device_report &d : reply.devices)
		sample(out, "tcmud_device_reopens_total", device_labels(d), d.reopens);
}

} // namespace

std::string prometheus_text(const control::control_reply &reply)
{
	std::string out;
	device_families(out, reply);
	for (const family &f : counters_and_gauges) {
		header(out, f.name, f.type, f.help);
		for (const control::device_report &d : reply.devices)
			for (size_t q = 0; q < d.queues.size(); ++q)
				sample(out, f.name, labels(d, q), f.value(d.queues[q]));
	}

	header(out, "tcmud_check_conditions_total", "counter",
	       "CHECK CONDITION statuses returned, by sense key (keys seen so far).");
	for (const control::device_report &d : reply.devices)
		for (size_t q = 0; q < d.queues.size(); ++q)
			for (size_t k = 0; k < d.queues[q].sense_keys.size(); ++k)
				if (uint64_t n = d.queues[q].sense_keys[k]) {
					char key[8];
					std::snprintf(key, sizeof(key), "0x%zx", k);
					sample(out, "tcmud_check_conditions_total",
					       labels(d, q) + ",sense_key=\"" + key + "\"", n);
				}

	// The daemon's buckets are 8 per power of two; the exposition keeps one
	// bound per power of two (2^k - 1 ns, the last value below 2^k), each an
	// exact cumulative count. _sum is the daemon's exact sum of the same
	// latencies (rate(_sum) / rate(_count): the mean), 0 from a daemon that
	// predates it.
	header(out, "tcmud_command_latency_seconds", "histogram",
	       "Time from a command's fetch from the ring to its completion's publication.");
	for (const control::device_report &d : reply.devices) {
		for (size_t q = 0; q < d.queues.size(); ++q) {
			const auto &counts = d.queues[q].latency;
			std::string lbl = labels(d, q);
			uint64_t cumulative = 0;
			for (size_t i = 0; i < counts.size(); ++i) {
				cumulative += counts[i];
				// Bucket i + 1 starts a power of two (bucket 0 ends at 2^10).
				bool octave_end = i + 1 < counts.size() &&
						  i % (1u << stats::latency_sub_bits) == 0;
				if (octave_end)
					sample(out, "tcmud_command_latency_seconds_bucket",
					       lbl + ",le=\"" + seconds(stats::latency_bucket_high(i)) + "\"",
					       cumulative);
			}
			sample(out, "tcmud_command_latency_seconds_bucket", lbl + ",le=\"+Inf\"", cumulative);
			sample(out, "tcmud_command_latency_seconds_sum", lbl,
			       seconds(d.queues[q].latency_sum_ns));
			sample(out, "tcmud_command_latency_seconds_count", lbl, cumulative);
		}
	}
	return out;
}

} // namespace tcmud::ctl
