// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/file_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "file/nofollow_open.h"
#include "tcmud/cfgstring_options.h"

namespace tcmud {
namespace {

// The cfgstring's syntax is wrong: EINVAL, and what is wrong.
setup_error malformed(std::string why)
{
	return setup_error{EINVAL, std::move(why)};
}

// "name" or "name=0|1": the flag's value; nullopt if it is anything else.
std::optional<bool> parse_flag_value(std::string_view text)
{
	if (text.empty() || text == "1")
		return true;
	if (text == "0")
		return false;
	return std::nullopt;
}

setup_result<void> parse_option(std::string_view option, file_config *out)
{
	size_t eq = option.find('=');
	std::string_view name = option.substr(0, eq);
	std::string_view value =
		eq == std::string_view::npos ? std::string_view() : option.substr(eq + 1);
	if (eq != std::string_view::npos && value.empty())
		return malformed("option '" + std::string(name) + "' has an empty value");

	bool *flag = nullptr;
	if (name == "direct")
		flag = &out->direct;
	else if (name == "extend")
		flag = &out->extend;
	else if (name == "block")
		flag = &out->block;
	else
		return malformed("unknown option '" + std::string(name) +
				 "' (known: direct, extend, block)");
	auto parsed = parse_flag_value(value);
	if (!parsed)
		return malformed("option '" + std::string(name) + "' takes 0 or 1, not '" +
				 std::string(value) + "'");
	*flag = *parsed;
	return {};
}

} // namespace

setup_result<file_config> parse_file_config(std::string_view cfgstring)
{
	file_config parsed;
	parsed.path = std::string(cfgstring.substr(0, cfgstring.find(';')));
	if (parsed.path.empty())
		return malformed("no backing file path given");
	if (parsed.path[0] != '/')
		return malformed("backing file path '" + parsed.path + "' is not absolute");
	auto options = for_each_cfgstring_option(
		cfgstring, [&](std::string_view option) { return parse_option(option, &parsed); });
	if (!options)
		return options.error();
	if (parsed.extend && parsed.block)
		return malformed("extend applies to regular files only; it cannot be combined "
				 "with block");
	return parsed;
}

setup_result<backing_node> open_backing_path(const file_config &cfg, int flags)
{
	auto opened = open_nofollow(cfg.path, flags);
	if (!opened) {
		setup_error e = opened.error();
		if (e.error == ELOOP)
			e.hint = "tcmud does not follow symbolic links in backing paths; "
				 "configure the real path";
		else if (e.error == EINVAL && (flags & O_DIRECT))
			e.hint = "the file system may not support O_DIRECT";
		return e;
	}
	backing_node node{std::move(*opened)};
	if (fstat(node.fd.get(), &node.st) < 0)
		return setup_error{errno, cfg.path + ": fstat"};
	const mode_t mode = node.st.st_mode;
	// The kind is checked against the cfgstring, not merely accepted: a
	// regular file swapped for a device node (or back) is refused.
	if (S_ISDIR(mode))
		return setup_error{EISDIR, cfg.path};
	if (S_ISREG(mode) && cfg.block)
		return setup_error{EINVAL, cfg.path + " is a regular file, not a block device",
				   "remove ;block to serve a regular file"};
	if (S_ISBLK(mode) && !cfg.block)
		return setup_error{EINVAL, cfg.path + " is a block device",
				   "add ;block to the cfgstring to serve a block device"};
	if (!S_ISREG(mode) && !S_ISBLK(mode))
		return malformed(cfg.path + " is neither a regular file nor a block device");
	return node;
}

setup_result<void> check_file_config(std::string_view cfgstring)
{
	auto parsed = parse_file_config(cfgstring);
	if (!parsed)
		return parsed.error();
	const file_config &cfg = *parsed;

	// O_PATH: look at the file without opening it for I/O (a device's
	// open may have side effects), through the same lookup as open().
	auto node = open_backing_path(cfg, O_PATH | O_CLOEXEC);
	if (!node)
		return node.error();
	// Of the node just opened (AT_EMPTY_PATH), not of the path looked up
	// again. AT_EACCESS: judge with the credentials open() will use, so a
	// daemon running without CAP_DAC_OVERRIDE is told the truth.
	// setup_error{errno, ...} reads errno before the message is built.
	if (faccessat(node->fd.get(), "", R_OK | W_OK, AT_EACCESS | AT_EMPTY_PATH) < 0)
		return setup_error{errno, cfg.path + " cannot be opened for reading and writing"};
	return {};
}

} // namespace tcmud
