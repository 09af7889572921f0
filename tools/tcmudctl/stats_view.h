// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// tcmudctl's view of two control-socket snapshots: one row per device (its
// queues summed) followed by one per queue, and the two ways to print them.
#include <cstdio>
#include <string>
#include <vector>

#include "control/control_protocol.h"
#include "stats/snapshot_delta.h"

namespace tcmud::ctl {

struct stats_row {
	std::string device;
	int queue = -1; // -1: the whole device
	stats::interval_rates rates;
};

// Rows for every device in `after`. A device missing from `before` (added
// in between) counts from zero; a queue's counters that went backwards
// (the device was re-created) count from zero too.
std::vector<stats_row> build_rows(const control::control_reply &before,
				  const control::control_reply &after);

void print_table(FILE *out, const std::vector<stats_row> &rows);
// One JSON line: {"interval_s":..,"devices":[{..,"queues":[..]}]}.
std::string rows_json(const std::vector<stats_row> &rows, double interval_s);
// The daemon's time between two replies, in seconds.
double interval_seconds(const control::control_reply &before, const control::control_reply &after);

void print_list(FILE *out, const std::vector<control::device_report> &devices);

} // namespace tcmud::ctl
