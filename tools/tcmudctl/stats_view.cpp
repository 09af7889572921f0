// SPDX-License-Identifier: GPL-2.0-or-later
#include "stats_view.h"

#include "control/json.h"

namespace tcmud::ctl {
namespace {

const control::device_report *find_device(const control::control_reply &r,
					   const control::device_report &like)
{
	for (const control::device_report &d : r.devices)
		if (d.name == like.name && d.uio == like.uio)
			return &d;
	return nullptr;
}

void rates_json(control::json_writer &w, const stats::interval_rates &r)
{
	w.key("commands").value(r.commands);
	w.key("iops").value(r.iops);
	w.key("read_bytes_per_s").value(r.read_bytes_per_s);
	w.key("write_bytes_per_s").value(r.write_bytes_per_s);
	w.key("latency_us").begin_object();
	w.key("p50").value(double(r.p50_ns) / 1e3);
	w.key("p99").value(double(r.p99_ns) / 1e3);
	w.key("p99.9").value(double(r.p999_ns) / 1e3);
	w.end_object();
	w.key("depth").value(r.depth);
	w.key("max_depth").value(r.max_depth);
	w.key("errors").value(r.errors);
	w.key("malformed").value(r.malformed);
	w.key("ring_resets").value(r.ring_resets);
	w.key("stale_results").value(r.stale_results);
}

} // namespace

std::vector<stats_row> build_rows(const control::control_reply &before,
				  const control::control_reply &after)
{
	uint64_t interval = after.time_ns > before.time_ns ? after.time_ns - before.time_ns : 0;
	std::vector<stats_row> rows;
	for (const control::device_report &d : after.devices) {
		const control::device_report *old = find_device(before, d);
		std::vector<stats::queue_snapshot> then(d.queues.size());
		if (old && old->queues.size() == d.queues.size())
			then = old->queues;
		rows.push_back({d.name, -1,
				stats::rates(stats::sum(then), stats::sum(d.queues), interval)});
		for (size_t q = 0; q < d.queues.size(); ++q)
			rows.push_back({d.name, int(q), stats::rates(then[q], d.queues[q], interval)});
	}
	return rows;
}

void print_table(FILE *out, const std::vector<stats_row> &rows)
{
	std::fprintf(out, "%-16s %5s %10s %10s %10s %9s %9s %9s %6s %6s %7s\n", "DEVICE", "QUEUE",
		     "IOPS", "READ MiB/s", "WRITE MiB/s", "p50 us", "p99 us", "p99.9 us", "DEPTH",
		     "MAX", "ERRORS");
	for (const stats_row &r : rows) {
		std::string q = r.queue < 0 ? "all" : std::to_string(r.queue);
		const stats::interval_rates &x = r.rates;
		std::fprintf(out, "%-16s %5s %10.1f %10.2f %11.2f %9.1f %9.1f %9.1f %6llu %6llu %7llu\n",
			     r.device.c_str(), q.c_str(), x.iops, x.read_bytes_per_s / 1048576.0,
			     x.write_bytes_per_s / 1048576.0, double(x.p50_ns) / 1e3,
			     double(x.p99_ns) / 1e3, double(x.p999_ns) / 1e3,
			     (unsigned long long)x.depth, (unsigned long long)x.max_depth,
			     (unsigned long long)x.errors);
	}
}

double interval_seconds(const control::control_reply &before, const control::control_reply &after)
{
	return after.time_ns > before.time_ns ? double(after.time_ns - before.time_ns) / 1e9 : 0.0;
}

// interval_s is passed, not taken from a row: with no device there is none.
std::string rows_json(const std::vector<stats_row> &rows, double interval_s)
{
	control::json_writer w;
	w.begin_object();
	w.key("interval_s").value(interval_s);
	w.key("devices").begin_array();
	bool open = false;
	for (const stats_row &r : rows) {
		if (r.queue < 0) {
			if (open)
				w.end_array().end_object();
			w.begin_object();
			w.key("name").value(r.device);
			rates_json(w, r.rates);
			w.key("queues").begin_array();
			open = true;
			continue;
		}
		w.begin_object();
		w.key("index").value(uint64_t(r.queue));
		rates_json(w, r.rates);
		w.end_object();
	}
	if (open)
		w.end_array().end_object();
	w.end_array();
	w.end_object();
	return w.text();
}

void print_list(FILE *out, const std::vector<control::device_report> &devices)
{
	std::fprintf(out, "%-16s %-10s %-6s %-8s %14s %6s %6s %-8s %-28s %s\n", "NAME", "HBA",
		     "UIO", "HANDLER", "SIZE", "BLOCK", "QUEUES", "STATE", "LOCK OWNER",
		     "CFGSTRING");
	for (const control::device_report &d : devices) {
		// "-": a medium without an exclusive lock (file, ram, an rbd
		// image without the feature).
		std::string owner = d.lock_owner.empty()  ? "-"
				    : d.lock_owner_is_us ? d.lock_owner + " (us)"
							  : d.lock_owner;
		std::fprintf(out, "%-16s %-10s %-6s %-8s %14llu %6u %6u %-8s %-28s %s\n",
			     d.name.c_str(), d.hba.c_str(), d.uio.c_str(), d.subtype.c_str(),
			     (unsigned long long)d.size_bytes, d.block_size, d.nr_queues,
			     d.state.c_str(), owner.c_str(), d.cfgstring.c_str());
	}
}

} // namespace tcmud::ctl
