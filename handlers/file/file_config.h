// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The file handler's cfgstring: "PATH[;option]...".
//
// PATH is the absolute path of a regular file or block device. ';' ends the
// path and separates options, each "name" or "name=0|1":
//   direct   open with O_DIRECT (bypass the page cache)
//   extend   grow a regular file smaller than the device size to that size
//   block    PATH is a block device (without it, a regular file)
// A path that itself contains ';' cannot be served: that is the price of a
// syntax no other path can be mistaken for, and no symbolic link may stand
// in for it (below).
//
// tcmud opens PATH as root, so it follows no symbolic link in any of its
// components, and the kind of file is part of the configuration (`block`):
// whoever may write to a directory on the path cannot turn the LUN into
// another file or a host disk (docs/handlers.md, "Backing paths").
#include <sys/stat.h>

#include <string>
#include <string_view>

#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud {

struct file_config {
	std::string path;
	bool direct = false;
	bool extend = false;
	bool block = false;
};

// The parsed string, or EINVAL and why it is malformed. Looks only at the
// text, not at the file system.
setup_result<file_config> parse_file_config(std::string_view cfgstring);

// The one way the handler opens a backing path, for check_config and for
// serving: open(cfg.path, flags) with no symbolic link in any component
// (ELOOP, saying so), then fstat, and a refusal (EINVAL, EISDIR) unless it
// is what the cfgstring says: a regular file, or with `block` a block
// device.
struct backing_node {
	unique_fd fd;
	struct stat st {};
};
setup_result<backing_node> open_backing_path(const file_config &cfg, int flags);

// handler_ops::check_config: the syntax, then the file itself, as
// open_backing_path sees it, readable and writable by this process.
setup_result<void> check_file_config(std::string_view cfgstring);

} // namespace tcmud
