// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/sysfs_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "tcmud/mapped_region.h"
#include "tcmud/unique_fd.h"

namespace tcmud {

namespace {

constexpr size_t max_attribute_size = 64 * 1024;

std::string_view trim(std::string_view s)
{
	while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t'))
		s.remove_suffix(1);
	while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
		s.remove_prefix(1);
	return s;
}

} // namespace

int read_attribute(const std::filesystem::path &p, std::string &out)
{
	unique_fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		return -errno;
	std::string buf;
	char chunk[4096];
	for (;;) {
		ssize_t n = ::read(fd.get(), chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		buf.append(chunk, size_t(n));
		if (buf.size() > max_attribute_size)
			return -EFBIG;
	}
	while (!buf.empty() && buf.back() == '\n')
		buf.pop_back();
	out = std::move(buf);
	return 0;
}

int write_attribute(const std::filesystem::path &p, std::string_view value)
{
	// O_TRUNC as a shell's "echo 1 > attr" does: configfs and sysfs ignore
	// it, and a fake tree made of plain files then reads back just `value`.
	unique_fd fd(::open(p.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
	if (!fd)
		return -errno;
	ssize_t n;
	do {
		n = ::write(fd.get(), value.data(), value.size());
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return size_t(n) == value.size() ? 0 : -EIO;
}

int parse_u64(std::string_view text, uint64_t &out)
{
	std::string_view s = trim(text);
	int base = 10;
	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s.remove_prefix(2);
		base = 16;
	}
	if (s.empty())
		return -EINVAL;
	uint64_t v = 0;
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
	if (ec != std::errc() || end != s.data() + s.size())
		return -EINVAL;
	out = v;
	return 0;
}

int read_u64_attribute(const std::filesystem::path &p, uint64_t &out)
{
	std::string text;
	if (int r = read_attribute(p, text); r < 0)
		return r;
	return parse_u64(text, out);
}

} // namespace tcmud
