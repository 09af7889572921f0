// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The option list every handler's cfgstring shares: "HEAD[;option]...",
// where ';' ends HEAD (a path, POOL/IMAGE) and separates the options.
#include <cerrno>
#include <string_view>

#include "tcmud/setup_result.h"

namespace tcmud {

// Calls parse_option(std::string_view) -> setup_result<void> for each
// option after HEAD, in order; stops at the first refusal. An empty option
// (";;" or a trailing ';') is EINVAL: it is always a typing mistake.
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
		if (auto parsed = parse_option(option); !parsed)
			return parsed;
	}
	return {};
}

} // namespace tcmud
