// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// systemd's readiness protocol without libsystemd: one datagram with
// "READY=1", "RELOADING=1", "STOPPING=1" or "STATUS=..." lines to the unix
// socket named in $NOTIFY_SOCKET (a path, or "@name" for the abstract
// namespace).

#include <cstdint>

namespace tcmud {

// 0 if sent or if not started by systemd (no $NOTIFY_SOCKET), else -errno:
// fire and forget (the watchdog sends WATCHDOG=1 every interval and nobody
// logs a failure), so no setup_result.
int sd_notify_state(const char *state);

// systemd's watchdog interval (WatchdogSec=) from $WATCHDOG_USEC, in
// microseconds; 0 when there is none or $WATCHDOG_PID names another process.
uint64_t sd_watchdog_usec();

} // namespace tcmud
