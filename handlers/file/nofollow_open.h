// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Opening a path as root without following a symbolic link anywhere in it.
//
// tcmud runs as root and opens paths an administrator wrote down (a backing
// file, the directory of its identity records). If someone else may write
// to any directory on such a path, they can put a symbolic link in place of
// the next component, and root would open, write to and (extend=1) grow the
// file of their choosing: /etc/shadow, /dev/sda. openat2(2) with
// RESOLVE_NO_SYMLINKS has the kernel refuse a link in any component during
// the one lookup that opens the file, so there is no window between a
// check and the open for a swap to slip into.
//
// Where openat2 is hidden (ENOSYS: systemd's RestrictSUIDSGID= and
// RestrictFileSystems= block it outright, since a seccomp filter cannot
// look inside struct open_how; or a kernel before 5.6), the same rule is
// kept by walking the path one component at a time, each opened relative
// to the directory before it with O_NOFOLLOW and checked not to be a link:
// no component is ever looked up by name from the root again, so a swap
// between two steps cannot redirect the walk either.
#include <sys/types.h>

#include <string>

#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud {

// open(path, flags, mode) for an absolute path, refusing a symbolic link
// (magic /proc links included) in every component. On failure the errno
// and "cannot open PATH"; for a link (ELOOP) also which component is one
// and where it points, so the administrator sees what to write instead.
setup_result<unique_fd> open_nofollow(const std::string &path, int flags, mode_t mode = 0);

// The component walk open_nofollow falls back to where openat2 is hidden:
// the fd, or -errno. Its own entry point so that tests run it on a kernel
// that has openat2.
int open_nofollow_walk(const std::string &path, int flags, mode_t mode = 0);

} // namespace tcmud
