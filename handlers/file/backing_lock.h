// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One writer per backing store: an open file description (OFD) write lock
// over the whole file, taken when a device opens it and held for as long as
// that open file lives.
//
// Why an OFD lock: the kernel drops it only when the last reference to the
// open file goes, and an io_uring request holds such a reference until it
// completes. A daemon killed with reads and writes stuck in the backing
// store (kill -9, the OOM killer, a watchdog kill) keeps its lock until the
// kernel has finished that I/O, after the process and its fds are gone.
// The next daemon waits for it here, before it resets the ring: otherwise
// the killed daemon's READs land in data blocks the ring has since handed to
// new commands, and its WRITEs go out with whatever those blocks then hold.
// It also keeps two LUNs, or tcmud and another program that locks, from
// writing one file uncoordinated.
//
// Not flock(2): udev and systemd-repart use BSD locks on whole block devices
// to mean "do not probe", and fcntl and BSD locks do not interact.

#include <string>

#include "tcmud/setup_result.h"

namespace tcmud {

// Takes the lock on fd (open for writing), waiting up to wait_ms for a
// holder to let go; path and log_prefix are for the log and the error. A
// file system without locks (ENOLCK, EINVAL) is served unlocked, with a
// warning. EBUSY if the holder is still there after wait_ms.
setup_result<void> lock_backing(int fd, const std::string &path, unsigned wait_ms,
				const std::string &log_prefix);

} // namespace tcmud
