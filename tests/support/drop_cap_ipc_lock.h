// SPDX-License-Identifier: GPL-2.0-or-later
// Drops CAP_IPC_LOCK from this process (a forked test child), so that the
// kernel charges pinned pages to RLIMIT_MEMLOCK as it does for an
// unprivileged daemon. Returns 0, or 10 (capget) / 11 (capset) as the
// child's exit code.
#pragma once

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tcmud::test {

inline int drop_cap_ipc_lock()
{
	__user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
	__user_cap_data_struct caps[2]{};
	if (syscall(SYS_capget, &hdr, caps) != 0)
		return 10;
	caps[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	caps[CAP_TO_INDEX(CAP_IPC_LOCK)].permitted &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	if (syscall(SYS_capset, &hdr, caps) != 0)
		return 11;
	return 0;
}

} // namespace tcmud::test
