// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/nofollow_open.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace tcmud {
namespace {

// The first component of `path` that is a symbolic link, and its target:
// "/srv/lun is a symbolic link to /etc". Only to explain a refusal already
// made, so it may race with the file system; "" when no link is found (it
// was removed meanwhile).
std::string describe_symlink(const std::string &path)
{
	std::array<char, 4096> target;
	for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
		std::string prefix = path.substr(0, end);
		// readlink succeeds only on a link, and every earlier prefix was
		// not one, so this names the first link on the way.
		ssize_t n = readlink(prefix.c_str(), target.data(), target.size());
		if (n >= 0)
			return prefix + " is a symbolic link to " +
			       std::string(target.data(), static_cast<size_t>(n));
		if (end == std::string::npos)
			return {};
	}
}

} // namespace

// openat2's rule without openat2: each directory on the way is opened
// O_PATH|O_NOFOLLOW relative to the one before and must be a directory (a
// link opened so is the link itself, and refused); the last component is
// opened with O_NOFOLLOW (ELOOP on a link).
int open_nofollow_walk(const std::string &path, int flags, mode_t mode)
{
	if (path.empty() || path[0] != '/')
		return -EINVAL;
	unique_fd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (!dir)
		return -errno;
	size_t at = 1;
	for (;;) {
		size_t end = path.find('/', at);
		std::string part = path.substr(at, end == std::string::npos ? end : end - at);
		bool last = end == std::string::npos || path.find_first_not_of('/', end) ==
								 std::string::npos;
		if (last) {
			if (part.empty())
				return -EISDIR;
			int fd = ::openat(dir.get(), part.c_str(), flags | O_NOFOLLOW, mode);
			return fd >= 0 ? fd : -errno;
		}
		if (!part.empty()) {
			unique_fd next(::openat(dir.get(), part.c_str(),
						O_PATH | O_NOFOLLOW | O_CLOEXEC));
			if (!next)
				return -errno;
			struct stat st;
			if (fstat(next.get(), &st) < 0)
				return -errno;
			if (S_ISLNK(st.st_mode))
				return -ELOOP;
			if (!S_ISDIR(st.st_mode))
				return -ENOTDIR;
			dir = std::move(next);
		}
		at = end + 1;
	}
}

setup_result<unique_fd> open_nofollow(const std::string &path, int flags, mode_t mode)
{
	open_how how{};
	how.flags = static_cast<uint64_t>(flags);
	// openat2 refuses a mode without O_CREAT or O_TMPFILE.
	how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	unique_fd fd(
		static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
	if (fd)
		return fd;
	int err = errno;
	if (err == ENOSYS) {
		int walked = open_nofollow_walk(path, flags, static_cast<mode_t>(how.mode));
		if (walked >= 0)
			return unique_fd(walked);
		err = -walked;
	}
	setup_error e{err, "cannot open " + path};
	if (e.error == ELOOP) {
		if (std::string link = describe_symlink(path); !link.empty())
			e.message += ": " + link;
	}
	return e;
}

} // namespace tcmud
