// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/log_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "log/log.h"
#include "tcmud/unique_fd.h"

namespace tcmud {
namespace {

unique_fd log_fd;

void write_line(int fd, std::string_view line)
{
	std::string buf(line);
	buf.push_back('\n');
	// One write per line, so concurrent writers never interleave inside it.
	ssize_t n = ::write(fd, buf.data(), buf.size());
	(void)n;
}

void file_and_stderr(void *, log_level, std::string_view line)
{
	write_line(STDERR_FILENO, line);
	if (log_fd)
		write_line(log_fd.get(), line);
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
