// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/log_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <string_view>

#include "log/log.h"
#include "tcmud/unique_fd.h"

namespace tcmud {
namespace {

unique_fd log_fd;

// The file gets the stderr line behind a UTC time stamp: under systemd the
// journal stamps stderr itself, a file has nothing else to date its lines.
void file_and_stderr(void *, log_level level, std::string_view line)
{
	char buf[max_formatted_line + 32];
	timespec now{};
	clock_gettime(CLOCK_REALTIME, &now);
	tm utc{};
	gmtime_r(&now.tv_sec, &utc);
	size_t stamp = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &utc);
	stamp += static_cast<size_t>(snprintf(buf + stamp, 32 - stamp, ".%03ldZ ",
					      now.tv_nsec / 1000000));
	size_t len = format_line(std::span<char>(buf + stamp, max_formatted_line), level, line);
	write_stderr_line(level, line);
	// One write per line, so concurrent writers never interleave inside it.
	if (log_fd) {
		ssize_t n = ::write(log_fd.get(), buf, stamp + len);
		(void)n;
	}
}

} // namespace

setup_result<void> set_log_dir(const std::string &dir)
{
	if (dir.empty()) {
		set_log_sink(nullptr, nullptr);
		log_fd.reset();
		return {};
	}
	std::string path = dir + "/tcmud.log";
	int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0)
		return setup_error{errno, "cannot open " + path};
	// The logger serialises sink calls; swapping the fd happens before the
	// sink is (re)installed, on the control thread.
	set_log_sink(nullptr, nullptr);
	log_fd.reset(fd);
	set_log_sink(&file_and_stderr, nullptr);
	return {};
}

} // namespace tcmud
