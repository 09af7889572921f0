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

// Each setup_error{errno, ...} reads errno before its message is built
// (brace initialisation runs left to right; see setup_result.h).
setup_result<std::string> read_attribute(const std::filesystem::path &p)
{
	unique_fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		return setup_error{errno, "cannot open " + p.string()};
	std::string buf;
	char chunk[4096];
	for (;;) {
		ssize_t n = ::read(fd.get(), chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return setup_error{errno, "cannot read " + p.string()};
		if (n == 0)
			break;
		buf.append(chunk, size_t(n));
		if (buf.size() > max_attribute_size)
			return setup_error{EFBIG, p.string() + " is larger than an attribute (" +
						   std::to_string(max_attribute_size) + " bytes)"};
	}
	while (!buf.empty() && buf.back() == '\n')
		buf.pop_back();
	return buf;
}

setup_result<void> write_attribute(const std::filesystem::path &p, std::string_view value)
{
	// O_TRUNC as a shell's "echo 1 > attr" does: configfs and sysfs ignore
	// it, and a fake tree made of plain files then reads back just `value`.
	unique_fd fd(::open(p.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
	if (!fd)
		return setup_error{errno, "cannot open " + p.string()};
	ssize_t n;
	do {
		n = ::write(fd.get(), value.data(), value.size());
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return setup_error{errno, "cannot write '" + std::string(value) + "' to " + p.string()};
	if (size_t(n) != value.size())
		return setup_error{EIO, "short write of '" + std::string(value) + "' to " + p.string()};
	return {};
}

std::optional<uint64_t> parse_u64(std::string_view text)
{
	std::string_view s = trim(text);
	int base = 10;
	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s.remove_prefix(2);
		base = 16;
	}
	if (s.empty())
		return std::nullopt;
	uint64_t v = 0;
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
	if (ec != std::errc() || end != s.data() + s.size())
		return std::nullopt;
	return v;
}

setup_result<uint64_t> read_u64_attribute(const std::filesystem::path &p)
{
	auto text = read_attribute(p);
	if (!text)
		return text.error();
	auto v = parse_u64(*text);
	if (!v)
		return setup_error{EINVAL, p.string() + " holds '" + *text + "', not a number"};
	return *v;
}

} // namespace tcmud
