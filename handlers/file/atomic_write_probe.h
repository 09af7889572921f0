// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What RWF_ATOMIC can do on a backing file or device: statx's
// STATX_WRITE_ATOMIC unit sizes (Linux 6.11+). The C library headers of the
// build host may predate them, so the call and the layout are our own.
#include <cstdint>

#include "tcmud/setup_result.h"

namespace tcmud {

struct atomic_write_units {
	bool reported = false;  // the kernel filled STATX_WRITE_ATOMIC
	uint32_t unit_min = 0;  // bytes; 0 when atomic writes are not possible
	uint32_t unit_max = 0;
	uint32_t segments_max = 0;
};

// statx(fd, STATX_WRITE_ATOMIC), once at open: the units, or statx's errno.
setup_result<atomic_write_units> probe_atomic_write(int fd);

// RWF_ATOMIC for preadv2/pwritev2 and io_uring's rw_flags (uapi/linux/fs.h).
inline constexpr int rwf_atomic = 0x00000040;

} // namespace tcmud
