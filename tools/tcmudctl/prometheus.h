// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// tcmudctl metrics: one control-socket snapshot in Prometheus' text
// exposition format (version 0.0.4): per-queue counters, depth gauges and
// the latency histogram, labelled device, hba and queue. For a
// node_exporter textfile collector (tcmudctl metrics --textfile) or any
// scraper that runs a command.
#include <string>
#include <string_view>

#include "control/control_protocol.h"

namespace tcmud::ctl {

std::string prometheus_text(const control::control_reply &reply);
// A label value with \, " and newline escaped as the format wants.
std::string prometheus_label_value(std::string_view v);

} // namespace tcmud::ctl
