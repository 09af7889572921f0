// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Text helpers the configuration parsers share.
#include <string_view>

namespace tcmud {

// s without leading and trailing blanks (space, tab, and the '\r' of a
// file written on Windows).
inline std::string_view trim_blanks(std::string_view s)
{
	size_t b = s.find_first_not_of(" \t\r");
	if (b == std::string_view::npos)
		return {};
	size_t e = s.find_last_not_of(" \t\r");
	return s.substr(b, e - b + 1);
}

} // namespace tcmud
