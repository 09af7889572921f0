// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The control socket's protocol: one JSON object per line each way.
//
//   -> {"command":"list"}
//   <- {"ok":true,"time_ns":T,"version":"0.1.0",
//       "devices":[{"name":..,"nr_queues":N,"state":"serving",...},...]}
//   -> {"command":"stats"}                 every device, with its queues
//   -> {"command":"stats","device":"lun0"} one device
//   <- {"ok":true,"time_ns":T,"devices":[{...,"queues":[{"index":0,
//        "commands":..,"latency":[[bucket,count],..]},..]}]}
//   <- {"ok":false,"error":"unknown command 'foo'"}
//   -> {"command":"reload"}                re-read the configuration files
//   <- {"ok":true,"time_ns":T,"devices":[]}
//   <- {"ok":false,"error":"configuration not reloaded: FILE:LINE: ..."}
//
// time_ns is the daemon's CLOCK_MONOTONIC when the counters were read, so a
// client computes rates over the daemon's own interval. version is the
// daemon's; state, lock_owner, lock_owner_is_us and reopens are what the
// backstore last saw (backstore_status). Members added after the first
// release are optional to a reader: an older daemon has none. Latency buckets are
// latency_histogram.h's, sent as [index,count] pairs of the non-empty ones.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stats/queue_stats.h"
#include "tcmud/setup_result.h"

namespace tcmud::control {

struct control_request {
	enum class kind { list, stats, reload };
	kind what = kind::list;
	std::string device; // stats: empty for every device
};

struct device_report {
	std::string name;       // the configfs device name ("lun0")
	std::string hba;        // "user_1"
	std::string uio;        // "uio0"
	std::string subtype;    // the handler, "file"
	std::string cfgstring;
	std::string state;      // "serving", or the backstore's (rbd: "owner", "standby", ...)
	std::string lock_owner; // the medium's exclusive lock holder; empty: no such lock
	bool lock_owner_is_us = false;
	uint64_t reopens = 0;   // backstore reconnections after being shut out
	uint64_t size_bytes = 0;
	uint32_t block_size = 0;
	uint32_t nr_queues = 0;
	uint64_t max_in_flight = 0; // command slots per queue
	uint32_t uring_entries = 0; // io_uring entries per queue
	std::vector<stats::queue_snapshot> queues; // stats only, index = queue
};

// Where the server gets the devices from; called on the thread that runs
// the server. with_stats: fill device_report::queues.
using report_source = std::function<std::vector<device_report>(bool with_stats)>;

// What "reload" runs, on the server's thread: an empty string when the new
// configuration is in force, else why it was refused (the running one stays).
using reload_action = std::function<std::string()>;

// The request a line asks for, or EINVAL and why it is malformed (the
// message answer() sends back).
setup_result<control_request> parse_request(std::string_view line);
std::string format_request(const control_request &req);

// The reply line (without the newline) to one request line. Without a
// reload action, "reload" is refused.
std::string answer(std::string_view line, const report_source &source, uint64_t time_ns,
		   const reload_action &reload = {}, std::string_view version = {});
std::string format_error(std::string_view message);

struct control_reply {
	uint64_t time_ns = 0;
	std::string version; // empty from a daemon that predates it
	std::vector<device_report> devices;
};

// A reply line as a client reads it, or EPROTO with the daemon's own error
// message or why the line is not a valid reply.
setup_result<control_reply> parse_reply(std::string_view line);

} // namespace tcmud::control
