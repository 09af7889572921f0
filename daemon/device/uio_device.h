// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// An open TCMU UIO device: the /dev/uioN file descriptor and the shared
// mapping of map0 (mailbox, command ring, data area), both owned.
//
// The kernel signals new entries by bumping the uio event count (read(2) of
// 4 bytes returns it, poll(2) reports POLLIN); we tell the kernel to collect
// responses by writing 4 bytes (tcmu_irqcontrol). One write covers every
// response published before it, so write once per batch.
#include <cstdint>
#include <span>

#include "device/device_roots.h"
#include "device/uio_discovery.h"
#include "tcmud/mapped_region.h"
#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud {

struct uio_open_options {
	// O_NONBLOCK on the fd: read_event() then returns -EAGAIN instead of
	// waiting. Set it when the fd is polled (poll(2), or io_uring's poll as
	// the queue workers do) and the count read only after a wake-up: a
	// wake-up with no new count then costs -EAGAIN, not a blocked worker.
	// Off for a caller that sleeps in read_event() itself.
	bool nonblocking = false;
};

// The uio half of one TCMU queue, without ownership: the fd a queue worker
// is woken by and hands its completions back through. uio_device owns the
// fd; a unit test passes one end of a socketpair instead.
class uio_channel {
public:
	uio_channel() = default;
	explicit uio_channel(int fd) : fd_(fd) {}

	int fd() const { return fd_; }
	// Both run per batch of commands on the queue worker: -errno, nothing
	// allocated (setup_result.h's hot-path convention).
	//
	// Asks the kernel to collect responses (tcmu_irqcontrol). `value` is
	// ignored by the stock kernel; the multi-queue kmod reads it as the
	// queue number. 0 or -errno.
	int notify(uint32_t value = 0) const;
	// Reads the uio event count (4 bytes), resuming after EINTR. 0, -EAGAIN
	// on a non-blocking fd with no new count, or -errno.
	int read_event(uint32_t &count) const;

private:
	int fd_ = -1;
};

class uio_device {
public:
	uio_device() = default;

	// Opens <dev>/<info.uio> and maps map0's map_size bytes. tcmu_mmap only
	// accepts exactly that size, at page offset 0 (uio's "map 0"). Set-up:
	// the error names the device node.
	static setup_result<uio_device> open(const device_roots &roots, const uio_device_info &info,
					     const uio_open_options &opts);

	int fd() const { return fd_.get(); }
	std::span<std::byte> mapping() const { return map_.bytes(); }
	// For the queue worker: valid while this device is open.
	uio_channel channel() const { return uio_channel(fd_.get()); }

	// See uio_channel (read_event blocks unless opened nonblocking).
	int notify(uint32_t value = 0) const { return channel().notify(value); }
	int read_event(uint32_t &count) const { return channel().read_event(count); }

	// Leaves the mapping in place for good (see mapped_region::abandon).
	void abandon_mapping() { map_.abandon(); }

private:
	unique_fd fd_;
	mapped_region map_;
};

} // namespace tcmud
