// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/atomic_write_probe.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tcmud {

namespace {

// uapi/linux/stat.h (6.11): the mask bit and where the fields sit in the
// 256-byte struct statx, after stx_subvol.
constexpr unsigned statx_write_atomic = 0x00010000U;
constexpr std::size_t statx_size = 256;
constexpr std::size_t off_mask = 0;
constexpr std::size_t off_unit_min = 168;
constexpr std::size_t off_unit_max = 172;
constexpr std::size_t off_segments_max = 176;

uint32_t field(const unsigned char *buf, std::size_t off)
{
	uint32_t v;
	std::memcpy(&v, buf + off, sizeof(v));
	return v;
}

} // namespace

setup_result<atomic_write_units> probe_atomic_write(int fd)
{
	atomic_write_units u;
	alignas(8) unsigned char buf[statx_size] = {};
	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, statx_write_atomic, buf) < 0)
		return setup_error{errno, "statx(STATX_WRITE_ATOMIC)"};
	if (!(field(buf, off_mask) & statx_write_atomic))
		return u;
	u.reported = true;
	u.unit_min = field(buf, off_unit_min);
	u.unit_max = field(buf, off_unit_max);
	u.segments_max = field(buf, off_segments_max);
	return u;
}

} // namespace tcmud
