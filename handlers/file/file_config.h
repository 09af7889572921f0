// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The file handler's cfgstring: "PATH[;option]...".
//
// PATH is the absolute path of a regular file or block device. ';' ends the
// path and separates options, each "name" or "name=0|1":
//   direct   open with O_DIRECT (bypass the page cache)
//   extend   grow a regular file smaller than the device size to that size
// A path that itself contains ';' must be reached through a symlink; that
// is the price of a syntax no other path can be mistaken for.
#include <string>
#include <string_view>

#include "tcmud/setup_result.h"

namespace tcmud {

struct file_config {
	std::string path;
	bool direct = false;
	bool extend = false;
};

// The parsed string, or EINVAL and why it is malformed. Looks only at the
// text, not at the file system.
setup_result<file_config> parse_file_config(std::string_view cfgstring);

// handler_ops::check_config: the syntax, then the file itself (exists, is a
// regular file or block device, readable and writable by this process).
setup_result<void> check_file_config(std::string_view cfgstring);

} // namespace tcmud
