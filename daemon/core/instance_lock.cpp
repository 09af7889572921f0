// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/instance_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "log/log.h"
#include "stats/monotonic_clock.h"

namespace tcmud {
namespace {

// The pid the holder wrote, 0 if the file has none (yet).
pid_t holder_pid(int fd)
{
	char buf[32] = {};
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	long pid = std::strtol(buf, nullptr, 10);
	return pid > 0 ? pid_t(pid) : 0;
}

// Whether a SIGKILL is pending for pid: killed, not yet scheduled to die
// (the usual state just after "kill -9", before PF_EXITING is set).
bool sigkill_pending(pid_t pid)
{
	std::ifstream f("/proc/" + std::to_string(pid) + "/status");
	std::string line;
	while (std::getline(f, line))
		if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0)
			if (std::strtoull(line.c_str() + 7, nullptr, 16) & (1ULL << (SIGKILL - 1)))
				return true;
	return false;
}

// Whether pid is gone or on its way out: killed, a zombie, or PF_EXITING
// (0x4) in /proc/PID/stat's flags (field 9), set from the start of do_exit().
bool exiting(pid_t pid)
{
	if (sigkill_pending(pid))
		return true;
	std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
	std::string stat;
	if (!std::getline(f, stat))
		return true;
	size_t paren = stat.rfind(')');
	if (paren == std::string::npos)
		return true;
	std::istringstream rest(stat.substr(paren + 1));
	std::string state;
	unsigned long long field = 0, flags = 0;
	rest >> state;
	for (int i = 4; i <= 9 && rest >> field; ++i)
		flags = field;
	return state == "Z" || state == "X" || (flags & 0x4);
}

uint64_t now_ms()
{
	return monotonic_ns() / 1'000'000;
}

} // namespace

setup_result<instance_lock> instance_lock::take(const std::string &path, uint64_t wait_ms)
{
	// /run/tcmud comes from systemd (RuntimeDirectory=); made here for a
	// daemon started by hand.
	if (auto slash = path.rfind('/'); slash != std::string::npos && slash > 0)
		if (mkdir(path.substr(0, slash).c_str(), 0755) < 0 && errno != EEXIST)
			return setup_error{errno, "cannot create " + path.substr(0, slash)};
	// O_NOFOLLOW: a root daemon opening a path in a directory others
	// might write (a lock path given for tests) follows no link.
	unique_fd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
	if (!fd)
		return setup_error{errno, "cannot open the instance lock " + path};
	uint64_t start = now_ms();
	pid_t waited_for = 0;
	for (;;) {
		if (flock(fd.get(), LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK)
			return setup_error{errno, "cannot lock " + path};
		pid_t pid = holder_pid(fd.get());
		uint64_t waited = now_ms() - start;
		// A holder with no pid written yet has just taken the lock:
		// give it a moment to say who it is.
		bool wait = pid ? exiting(pid) : waited < 1000;
		if (!wait)
			return setup_error{EBUSY,
					   "tcmud is already running as pid " + std::to_string(pid) +
						   " (it holds " + path + ")",
					   "stop it first (systemctl stop tcmud); two daemons "
					   "would serve the same rings"};
		if (waited >= wait_ms)
			return setup_error{EBUSY, "the previous tcmud" +
							  (pid ? " (pid " + std::to_string(pid) + ")"
							       : std::string()) +
							  " still holds " + path + " after " +
							  std::to_string(waited) + " ms"};
		if (pid && pid != waited_for) {
			log_info("", "waiting for the previous tcmud (pid %d), which is exiting, "
				 "to release %s", int(pid), path.c_str());
			waited_for = pid;
		}
		usleep(20'000);
	}
	if (waited_for)
		log_info("", "the previous tcmud released %s after %llu ms", path.c_str(),
			 (unsigned long long)(now_ms() - start));
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%d\n", int(getpid()));
	if (ftruncate(fd.get(), 0) < 0 || pwrite(fd.get(), pid, size_t(len), 0) != len)
		return setup_error{errno, "cannot write the pid to " + path};
	return instance_lock(std::move(fd));
}

} // namespace tcmud
