// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/uio_holders.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <system_error>

namespace tcmud {

std::vector<pid_t> processes_holding(dev_t rdev, const std::filesystem::path &proc_root)
{
	namespace fs = std::filesystem;
	std::vector<pid_t> found;
	std::error_code ec;
	const pid_t self = getpid();
	for (fs::directory_iterator it(proc_root, ec), end; !ec && it != end; it.increment(ec)) {
		const std::string name = it->path().filename().string();
		char *rest = nullptr;
		long pid = std::strtol(name.c_str(), &rest, 10);
		if (name.empty() || *rest != '\0' || pid <= 0 || pid == self)
			continue;
		std::error_code fd_ec;
		for (fs::directory_iterator fd(it->path() / "fd", fd_ec), fd_end;
		     !fd_ec && fd != fd_end; fd.increment(fd_ec)) {
			// stat() follows the magic link to the open file itself.
			struct stat st;
			if (stat(fd->path().c_str(), &st) == 0 && S_ISCHR(st.st_mode) &&
			    st.st_rdev == rdev) {
				found.push_back(static_cast<pid_t>(pid));
				break;
			}
		}
	}
	return found;
}

} // namespace tcmud
