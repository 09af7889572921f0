// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/uio_device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace tcmud {

setup_result<uio_device> uio_device::open(const device_roots &roots, const uio_device_info &info,
					  const uio_open_options &opts)
{
	if (!is_safe_path_component(info.uio))
		return setup_error{EINVAL, "'" + info.uio + "' is not a device name"};
	auto path = roots.dev / info.uio;
	if (info.map_size == 0)
		return setup_error{EINVAL, path.string() + ": map0 has size 0"};
	int flags = O_RDWR | O_CLOEXEC | (opts.nonblocking ? O_NONBLOCK : 0);
	unique_fd fd(::open(path.c_str(), flags));
	if (!fd)
		return setup_error{errno, "cannot open " + path.string()};

	size_t len = size_t(info.map_size);
	void *addr = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
	if (addr == MAP_FAILED)
		return setup_error{errno, "cannot map " + std::to_string(len) + " bytes of " +
						  path.string()};
	uio_device dev;
	dev.map_ = mapped_region(addr, len);
	dev.fd_ = std::move(fd);
	return dev;
}

// The doorbell and event reads go through syscall(), not read()/write():
// those are pthread cancellation points, and in a process with threads glibc
// switches the calling thread's cancel type around each one (~30
// instructions per call, once or twice per batch of commands). tcmud never
// cancels a thread; its workers stop on their own.
int uio_channel::notify(uint32_t value) const
{
	long n;
	do {
		n = ::syscall(SYS_write, fd_, &value, sizeof(value));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == long{sizeof(value)} ? 0 : -EIO;
}

int uio_channel::read_event(uint32_t &count) const
{
	long n;
	do {
		n = ::syscall(SYS_read, fd_, &count, sizeof(count));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == long{sizeof(count)} ? 0 : -EIO;
}

} // namespace tcmud
