// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/backing_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log/log.h"

namespace tcmud {

namespace {

// 0 on success, else the errno of F_OFD_SETLK.
int try_lock(int fd)
{
	struct flock lk {};
	lk.l_type = F_WRLCK;
	lk.l_whence = SEEK_SET;
	lk.l_start = 0;
	lk.l_len = 0; // to the end, and past it as the file grows
	return fcntl(fd, F_OFD_SETLK, &lk) == 0 ? 0 : errno;
}

} // namespace

setup_result<void> lock_backing(int fd, const std::string &path, unsigned wait_ms,
				const std::string &log_prefix)
{
	constexpr unsigned step_ms = 100;
	for (unsigned waited = 0;; waited += step_ms) {
		const int err = try_lock(fd);
		if (err == 0) {
			if (waited > 0)
				log_info(log_prefix, "%s: the other holder let go after %u ms",
					 path.c_str(), waited);
			return {};
		}
		if (err != EAGAIN && err != EACCES) {
			log_warn(log_prefix, "%s: cannot be locked (%s): served without the lock "
				 "that keeps a second writer out", path.c_str(), std::strerror(err));
			return {};
		}
		if (waited == 0)
			log_warn(log_prefix, "%s is locked by another open of it (another device on "
				 "the same file, another program, or the I/O of a daemon that was "
				 "killed, still running in the kernel): waiting up to %u s",
				 path.c_str(), wait_ms / 1000);
		if (waited >= wait_ms)
			return setup_error{EBUSY,
					   path + " is still locked by another open of it after " +
						   std::to_string(wait_ms / 1000) + " s",
					   "a second device on one file is refused; if a previous "
					   "daemon's I/O is stuck in the backing store, restart tcmud "
					   "once it has finished"};
		usleep(step_ms * 1000);
	}
}

} // namespace tcmud
