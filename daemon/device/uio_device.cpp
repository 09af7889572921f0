// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/uio_device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace tcmud {

int uio_device::open(const device_roots &roots, const uio_device_info &info,
		     const uio_open_options &opts, uio_device &out)
{
	if (!is_safe_path_component(info.uio) || info.map_size == 0)
		return -EINVAL;
	int flags = O_RDWR | O_CLOEXEC | (opts.nonblocking ? O_NONBLOCK : 0);
	auto path = roots.dev / info.uio;
	unique_fd fd(::open(path.c_str(), flags));
	if (!fd)
		return -errno;

	size_t len = size_t(info.map_size);
	void *addr = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
	if (addr == MAP_FAILED)
		return -errno;
	out.map_ = mapped_region(addr, len);
	out.fd_ = std::move(fd);
	return 0;
}

int uio_channel::notify(uint32_t value) const
{
	ssize_t n;
	do {
		n = ::write(fd_, &value, sizeof(value));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == sizeof(value) ? 0 : -EIO;
}

int uio_channel::read_event(uint32_t &count) const
{
	ssize_t n;
	do {
		n = ::read(fd_, &count, sizeof(count));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == sizeof(count) ? 0 : -EIO;
}

} // namespace tcmud
