// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One tcmud per host. Two daemons would both answer the kernel's netlink
// events and both reset and serve every device's ring, each completing
// commands the other fetched. The lock is flock(2) on a file in /run/tcmud,
// held for the daemon's life; the holder writes its pid there so a refusal
// can name it. The kernel drops the lock with the holder's last reference to
// the file, so a crashed daemon leaves nothing to clean up.
//
// A holder that is exiting (kill -9, then a new daemon at once: its exit can
// wait seconds for io_uring requests stuck in a slow backing store) is waited
// for, up to wait_ms; a running holder is refused at once with EBUSY.
#include <cstdint>
#include <string>

#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud {

inline constexpr const char *default_instance_lock_path = "/run/tcmud/tcmud.lock";

class instance_lock {
public:
	static setup_result<instance_lock> take(const std::string &path, uint64_t wait_ms);

private:
	explicit instance_lock(unique_fd fd) : fd_(std::move(fd)) {}
	unique_fd fd_;
};

} // namespace tcmud
