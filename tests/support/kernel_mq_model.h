// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The multi-queue side of the patched kernel (kmod/patches/0002), for unit
// tests: N complete classic rings (one kernel_ring_model each), a command
// steered to queue (submitting CPU % N) as tcmu_queue_cmd does, each queue's
// new entries signalling that queue's eventfd (TCMU_MQ_IOC_SET_EVENTFD), and
// the completion "write of the 32-bit value q to the uio device" arriving on
// one socket shared by all queues, where it completes queue q only.
//
// The kernel maps the rings one after the other in one mmap(); here each ring
// has its own buffer. A worker is handed its queue's span either way, and
// every offset in an entry is relative to that queue's mailbox, so nothing a
// worker can observe differs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kernel_ring_model.h"

namespace tcmud::test {

class kernel_mq_model {
public:
	kernel_mq_model(unsigned nr_queues, const model_options &opts = {});
	~kernel_mq_model();
	kernel_mq_model(const kernel_mq_model &) = delete;
	kernel_mq_model &operator=(const kernel_mq_model &) = delete;

	unsigned nr_queues() const { return unsigned(rings_.size()); }
	kernel_ring_model &ring(unsigned q) { return *rings_[q]; }
	int event_fd(unsigned q) const { return event_fds_[q]; }
	// The worker's end of the "uio device": it writes its queue index here.
	int uio_fd() const { return uio_[0]; }

	static unsigned queue_of_cpu(unsigned cpu, unsigned nr_queues) { return cpu % nr_queues; }

	// queue_cmd_ring on the queue of `cpu`; nullopt when that queue is full.
	// The queue is not woken until notify() (the kernel wakes once per
	// plugged batch).
	struct queued {
		unsigned queue;
		uint16_t cmd_id;
	};
	std::optional<queued> submit(unsigned cpu, std::span<const uint8_t> cdb,
				     std::span<const uint8_t> data_out = {}, size_t data_in_len = 0);
	// Signals queue q's eventfd.
	void notify(unsigned q);
	void notify_all();

	// Reads the completion writes that arrived (waiting up to timeout_ms for
	// the first) and runs tcmu_handle_completions on the queue each names.
	// Returns false on a write that is not a 4-byte queue index < N.
	bool handle_doorbells(int timeout_ms);
	// Completion writes received for queue q.
	size_t doorbells(unsigned q) const { return doorbells_[q]; }
	size_t completions() const;
	bool any_broken() const;

private:
	std::vector<std::unique_ptr<kernel_ring_model>> rings_;
	std::vector<int> event_fds_;
	std::vector<size_t> doorbells_;
	int uio_[2] = {-1, -1};
};

} // namespace tcmud::test
