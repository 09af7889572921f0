// SPDX-License-Identifier: GPL-2.0-or-later
#include "kernel_mq_model.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace tcmud::test {

kernel_mq_model::kernel_mq_model(unsigned nr_queues, const model_options &opts)
	: doorbells_(nr_queues, 0)
{
	// SOCK_SEQPACKET keeps each 4-byte write of each worker one message, as
	// each write() to the uio device is one call into the kernel.
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, uio_) < 0 ||
	    fcntl(uio_[1], F_SETFL, O_NONBLOCK) < 0)
		throw std::runtime_error("socketpair");
	for (unsigned q = 0; q < nr_queues; ++q) {
		rings_.push_back(std::make_unique<kernel_ring_model>(opts));
		int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fd < 0)
			throw std::runtime_error("eventfd");
		event_fds_.push_back(fd);
	}
}

kernel_mq_model::~kernel_mq_model()
{
	for (int fd : event_fds_)
		close(fd);
	close(uio_[0]);
	close(uio_[1]);
}

std::optional<kernel_mq_model::queued>
kernel_mq_model::submit(unsigned cpu, std::span<const uint8_t> cdb,
			std::span<const uint8_t> data_out, size_t data_in_len)
{
	unsigned q = queue_of_cpu(cpu, nr_queues());
	auto id = rings_[q]->queue_command(cdb, data_out, data_in_len);
	if (!id)
		return std::nullopt;
	return queued{q, *id};
}

void kernel_mq_model::notify(unsigned q)
{
	uint64_t one = 1;
	if (write(event_fds_[q], &one, sizeof(one)) != sizeof(one))
		throw std::runtime_error("eventfd write");
}

void kernel_mq_model::notify_all()
{
	for (unsigned q = 0; q < nr_queues(); ++q)
		notify(q);
}

bool kernel_mq_model::handle_doorbells(int timeout_ms)
{
	pollfd p{uio_[1], POLLIN, 0};
	if (poll(&p, 1, timeout_ms) <= 0)
		return true;
	uint32_t q;
	ssize_t n;
	while ((n = read(uio_[1], &q, sizeof(q))) > 0) {
		if (n != sizeof(q) || q >= nr_queues())
			return false;
		// The kernel's uio write handler: complete queue q only.
		doorbells_[q]++;
		rings_[q]->handle_completions();
	}
	return true;
}

size_t kernel_mq_model::completions() const
{
	size_t n = 0;
	for (const auto &r : rings_)
		n += r->completions().size();
	return n;
}

bool kernel_mq_model::any_broken() const
{
	for (const auto &r : rings_)
		if (r->broken())
			return true;
	return false;
}

} // namespace tcmud::test
