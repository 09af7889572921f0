// SPDX-License-Identifier: GPL-2.0-or-later
#include "config/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace tcmud {

int sd_notify_state(const char *state)
{
	const char *path = std::getenv("NOTIFY_SOCKET");
	if (!path || !*path)
		return 0;
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	size_t len = std::strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(addr.sun_path))
		return -EINVAL;
	std::memcpy(addr.sun_path, path, len);
	if (path[0] == '@')
		addr.sun_path[0] = '\0';  // abstract namespace
	socklen_t addr_len = socklen_t(offsetof(sockaddr_un, sun_path) + len);

	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ssize_t n = sendto(fd, state, std::strlen(state), MSG_NOSIGNAL,
			   reinterpret_cast<const sockaddr *>(&addr), addr_len);
	int rc = n < 0 ? -errno : 0;
	close(fd);
	return rc;
}

uint64_t sd_watchdog_usec()
{
	const char *usec = std::getenv("WATCHDOG_USEC");
	if (!usec || !*usec)
		return 0;
	const char *pid = std::getenv("WATCHDOG_PID");
	if (pid && *pid) {
		char *end = nullptr;
		long long p = std::strtoll(pid, &end, 10);
		if (*end || p != getpid())
			return 0;
	}
	char *end = nullptr;
	unsigned long long v = std::strtoull(usec, &end, 10);
	return *end ? 0 : uint64_t(v);
}

} // namespace tcmud
