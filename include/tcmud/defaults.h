// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The daemon's tunable defaults, each defined once; tcmud.conf and the
// command line override the first two (man/tcmud.conf.5 and man/tcmud.8
// state the same numbers; docs/glossary.md lists where each is used).
#include <cstddef>

namespace tcmud {

// Command slots per queue: commands taken from the ring and not yet
// completed (max_in_flight).
inline constexpr std::size_t default_max_in_flight = 256;

// io_uring submission queue entries per queue (uring_entries).
inline constexpr unsigned default_uring_entries = 256;

// How long stopping a queue waits for the commands in flight to finish
// before it gives up on them (docs/daemon.md, "Stopping and restarting").
inline constexpr unsigned default_drain_timeout_ms = 30000;

} // namespace tcmud
