// SPDX-License-Identifier: GPL-2.0-or-later
#include "kernel_mq_model.h"
#include "uio_standin.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "ring/tcmu_abi.h"

namespace tcmud::test {

namespace {

// What tcmu_alloc_queue writes into queue q's mailbox when N > 1.
void mark_mq_mailbox(std::span<std::byte> map, unsigned q, unsigned n)
{
	uint16_t flags, nr = uint16_t(n), idx = uint16_t(q);
	std::memcpy(&flags, map.data() + TCMUD_MB_FLAGS_OFF, sizeof(flags));
	flags |= TCMUD_MB_FLAG_CAP_MQ;
	std::memcpy(map.data() + TCMUD_MB_FLAGS_OFF, &flags, sizeof(flags));
	std::memcpy(map.data() + TCMUD_MQ_NR_QUEUES_OFF, &nr, sizeof(nr));
	std::memcpy(map.data() + TCMUD_MQ_QUEUE_OFF, &idx, sizeof(idx));
}

} // namespace

kernel_mq_model::kernel_mq_model(unsigned nr_queues, const model_options &opts)
	: doorbells_(nr_queues, 0), events_(nr_queues, 0)
{
	for (unsigned q = 0; q < nr_queues; ++q) {
		rings_.push_back(std::make_unique<kernel_ring_model>(opts));
		if (nr_queues > 1)
			mark_mq_mailbox(rings_.back()->mapping(), q, nr_queues);
		// SOCK_SEQPACKET keeps each 4-byte write one message, as each
		// write() to a uio device is one call into the kernel. The
		// worker's end is non-blocking, as tcmud opens /dev/uioN.
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
		    fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0 || fcntl(sv[1], F_SETFL, O_NONBLOCK) < 0)
			throw std::runtime_error("socketpair");
		uio_.push_back({sv[0], sv[1]});
	}
}

kernel_mq_model::~kernel_mq_model()
{
	for (auto &p : uio_) {
		close(p.worker);
		close(p.kernel);
	}
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
	uint32_t count = ++events_[q];
	if (!raise_uio_interrupt(uio_[q].worker, uio_[q].kernel, count))
		throw std::runtime_error("uio notify");
}

void kernel_mq_model::notify_all()
{
	for (unsigned q = 0; q < nr_queues(); ++q)
		notify(q);
}

bool kernel_mq_model::handle_doorbells(int timeout_ms)
{
	std::vector<pollfd> fds;
	for (const auto &p : uio_)
		fds.push_back({p.kernel, POLLIN, 0});
	if (poll(fds.data(), fds.size(), timeout_ms) <= 0)
		return true;
	for (unsigned q = 0; q < nr_queues(); ++q) {
		uint32_t value;
		ssize_t n;
		while ((n = read(uio_[q].kernel, &value, sizeof(value))) > 0) {
			if (n != sizeof(value))
				return false;
			// tcmu_irqcontrol: the device written to is the queue.
			doorbells_[q]++;
			rings_[q]->handle_completions();
		}
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
