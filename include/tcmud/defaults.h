// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The daemon's tunable defaults, each defined once; tcmud.conf and the
// command line override them, the drain timeout excepted (tcmud --help
// prints them; man/tcmud.conf.5, man/tcmud.8 and docs/admin.md state the
// same values, tests/lint/doc-promises.py checks that they do).
#include <cstddef>

namespace tcmud {

// Command slots per queue: commands taken from the ring and not yet
// completed (max_in_flight).
inline constexpr std::size_t default_max_in_flight = 256;

// io_uring submission queue entries per queue (uring_entries).
inline constexpr unsigned default_uring_entries = 256;

// The most one command may transfer (max_transfer_kb), in KiB: LIO
// fileio's own maximum; the data area may lower it per device.
inline constexpr unsigned default_max_transfer_kb = 8192;

// Directory of tcmud.log (log_dir); the log also goes to stderr.
inline constexpr const char *default_log_dir = "/var/log";

// tcmudctl's control socket (control_socket); "none" turns it off.
inline constexpr const char *default_control_socket = "/run/tcmud/tcmud.sock";

// How long stopping a queue waits for the commands in flight to finish
// before it gives up on them (docs/daemon.md, "Stopping and restarting").
inline constexpr unsigned default_drain_timeout_ms = 30000;

} // namespace tcmud
