// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Which other processes hold a uio device open.
//
// Before a new daemon takes a device over it resets the ring, which hands
// the data blocks of every command to new ones. A process that still has
// the device open (a previous daemon hung in the kernel or not yet gone, a
// tcmu-runner, a second tcmud) may still read or write that data area, so
// the new daemon waits for it to go: /proc/PID/fd/N naming the device.
//
// What this cannot see: io_uring requests of a daemon that has exited. Its
// exit does not wait for plain reads and writes in flight; they go on in
// the kernel's ring exit work after the process and its fds are gone
// (checked on 6.12 with a daemon killed under dm-delay: no holder was
// left while its I/O still ran).
#include <sys/types.h>

#include <filesystem>
#include <vector>

namespace tcmud {

// The processes other than this one with an fd on the character device
// `rdev` open, found under proc_root (/proc; tests give their own).
// Processes that vanish or hide their fds while we look are skipped.
std::vector<pid_t> processes_holding(dev_t rdev,
				     const std::filesystem::path &proc_root = "/proc");

} // namespace tcmud
