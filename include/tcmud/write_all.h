// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// All of `text` to a blocking fd, through short writes and EINTR; false on
// any other failure (errno says which) or a write of nothing. For small
// control-path writes (a state file, an HTTP answer), never the data path.
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace tcmud {

inline bool write_all(int fd, std::string_view text)
{
	while (!text.empty()) {
		ssize_t n = ::write(fd, text.data(), text.size());
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		text.remove_prefix(static_cast<std::size_t>(n));
	}
	return true;
}

} // namespace tcmud
