// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The interrupt of /dev/uioN, raised on the socketpair that stands in for the
// device in the unit tests and benches. uio keeps an event count, not a
// queue: each notification bumps it and wakes the fd's waiters, and a read
// returns the latest count. The worker reads it only where its poll is
// one-shot (a multishot poll posts a CQE per wake-up), so interrupts it left
// unread are dropped here before the new one is written: the socket, unlike
// uio, would otherwise fill (net.unix.max_dgram_qlen messages) and block the
// model.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace tcmud::test {

// worker_fd: the worker's end (its uio_channel); model_fd: the model's.
// False if the interrupt could not be written.
inline bool raise_uio_interrupt(int worker_fd, int model_fd, uint32_t count)
{
	uint32_t stale;
	while (recv(worker_fd, &stale, sizeof(stale), MSG_DONTWAIT) > 0) {
	}
	return write(model_fd, &count, sizeof(count)) == sizeof(count);
}

} // namespace tcmud::test
