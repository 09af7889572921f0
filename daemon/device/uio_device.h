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
#include "tcmud/unique_fd.h"

namespace tcmud {

struct uio_open_options {
	// O_NONBLOCK on the fd: read_event() then returns -EAGAIN instead of
	// waiting. Leave it off when io_uring polls the fd.
	bool nonblocking = false;
};

class uio_device {
public:
	uio_device() = default;

	// Opens <dev>/<info.uio> and maps map0's map_size bytes. tcmu_mmap only
	// accepts exactly that size, at page offset 0 (uio's "map 0").
	static int open(const device_roots &roots, const uio_device_info &info,
			const uio_open_options &opts, uio_device &out);

	int fd() const { return fd_.get(); }
	std::span<std::byte> mapping() const { return map_.bytes(); }

	// Asks the kernel to collect responses. `value` is ignored by the stock
	// kernel; the multi-queue kmod reads it as the queue number.
	int notify(uint32_t value = 0);

	// Reads the uio event count (blocks unless opened nonblocking).
	int read_event(uint32_t &count);

	// Leaves the mapping in place for good (see mapped_region::abandon).
	void abandon_mapping() { map_.abandon(); }

private:
	unique_fd fd_;
	mapped_region map_;
};

} // namespace tcmud
