// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/file_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

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
	else
		return malformed("unknown option '" + std::string(name) +
				 "' (known: direct, extend)");
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
	return parsed;
}

setup_result<void> check_file_config(std::string_view cfgstring)
{
	auto parsed = parse_file_config(cfgstring);
	if (!parsed)
		return parsed.error();
	const file_config &cfg = *parsed;

	// setup_error{errno, ...} reads errno before the message is built.
	struct stat st;
	if (stat(cfg.path.c_str(), &st) < 0)
		return setup_error{errno, cfg.path};
	if (S_ISDIR(st.st_mode))
		return setup_error{EISDIR, cfg.path};
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return malformed(cfg.path + " is neither a regular file nor a block device");
	if (cfg.extend && !S_ISREG(st.st_mode))
		return malformed("extend applies to regular files only, and " + cfg.path +
				 " is a block device");
	// AT_EACCESS: judge with the credentials open() will use, so a daemon
	// running without CAP_DAC_OVERRIDE is told the truth.
	if (faccessat(AT_FDCWD, cfg.path.c_str(), R_OK | W_OK, AT_EACCESS) < 0)
		return setup_error{errno, cfg.path + " cannot be opened for reading and writing"};
	return {};
}

} // namespace tcmud
