// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The option list every handler's cfgstring shares: "HEAD[;option]...",
// where ';' ends HEAD (a path, POOL/IMAGE) and separates the options.
#include <cerrno>
#include <string_view>

#include "tcmud/setup_result.h"

namespace tcmud {

// tcmu-runner's own per-device option, "tcmur_cmd_time_out=SECONDS", which
// its saved configurations may carry behind any handler's cfgstring. It
// timed commands out inside tcmu-runner; tcmud leaves that to the kernel's
// cmd_time_out (the device's attrib), so the option is accepted when its
// value is a number of seconds and otherwise ignored (docs/admin.md).
inline bool is_tcmu_runner_option(std::string_view option)
{
	constexpr std::string_view name = "tcmur_cmd_time_out=";
	if (!option.starts_with(name) || option.size() == name.size() ||
	    option.size() > name.size() + 9)
		return false;
	for (char c : option.substr(name.size()))
		if (c < '0' || c > '9')
			return false;
	return true;
}

// Calls parse_option(std::string_view) -> setup_result<void> for each
// option after HEAD, in order, but tcmu-runner's own (above); stops at the
// first refusal. An empty option (";;" or a trailing ';') is EINVAL: it is
// always a typing mistake.
template <class F>
setup_result<void> for_each_cfgstring_option(std::string_view cfgstring, F &&parse_option)
{
	size_t end = cfgstring.find(';');
	while (end != std::string_view::npos) {
		size_t start = end + 1;
		end = cfgstring.find(';', start);
		std::string_view option = cfgstring.substr(start, end - start);
		if (option.empty())
			return setup_error{EINVAL, "empty option (two ';' in a row or a trailing ';')"};
		if (is_tcmu_runner_option(option))
			continue;
		if (auto parsed = parse_option(option); !parsed)
			return parsed;
	}
	return {};
}

} // namespace tcmud
