// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// tcmudctl metrics --http: one HTTP/1.x exchange for a Prometheus scrape,
// on a connection systemd accepted (systemd/tcmud-metrics.socket, Accept=yes,
// localhost only and off by default), so that no long-lived HTTP server runs
// in the daemon or as root. The request head is read with a size and a time
// limit; anything but GET or HEAD of /metrics (or /) gets its 4xx, and a
// daemon that cannot be asked gets 503 with the reason.
#include <functional>
#include <string>
#include <string_view>

#include "tcmud/setup_result.h"

namespace tcmud::ctl {

// The Prometheus text of a fresh snapshot, or why there is none.
using metrics_source = std::function<setup_result<std::string>()>;

// A request head longer than this is refused (431); Prometheus sends ~300 bytes.
inline constexpr size_t http_max_head = 8192;

// The whole response (status line, headers, body) to `head`, the bytes of
// a request up to and including its blank line; `complete` false when the
// client stopped (or the limits hit) before that line.
std::string http_response(std::string_view head, bool complete, const metrics_source &metrics);

// Reads a request head from `in` (at most http_max_head bytes, for at most
// timeout_ms in all), writes http_response() to `out`. 0, or 1 when the
// response could not be written (the client went away).
int serve_http(int in, int out, int timeout_ms, const metrics_source &metrics);

} // namespace tcmud::ctl
