// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The multi-queue side of the patched kernel (kmod/patches/0002), for unit
// tests: N complete classic rings (one kernel_ring_model each), a command
// steered to queue (submitting CPU % N) as tcmu_queue_cmd does, and one "uio
// device" per queue, as the kernel registers one per queue: a socketpair
// whose model end raises that queue's interrupt (a 4-byte event count the
// worker reads) and receives that queue's completion writes, which complete
// that queue only, whatever value is written.
//
// Each ring's mailbox carries TCMU_MAILBOX_FLAG_CAP_MQ and the queue's place
// (struct tcmu_mq_mailbox) when N > 1, as the kernel writes them.
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
	// The worker's end of queue q's "uio device".
	int uio_fd(unsigned q) const { return uio_[q].worker; }

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
	// uio_event_notify on queue q's uio device.
	void notify(unsigned q);
	void notify_all();

	// Reads the completion writes that arrived on any queue's uio device
	// (waiting up to timeout_ms for the first) and runs
	// tcmu_handle_completions on the queue whose device was written.
	// Returns false on a write that is not 4 bytes.
	bool handle_doorbells(int timeout_ms);
	// Completion writes received on queue q's uio device.
	size_t doorbells(unsigned q) const { return doorbells_[q]; }
	size_t completions() const;
	bool any_broken() const;

private:
	struct uio_pair {
		int worker = -1;
		int kernel = -1;
	};
	std::vector<std::unique_ptr<kernel_ring_model>> rings_;
	std::vector<uio_pair> uio_;
	std::vector<size_t> doorbells_;
	std::vector<uint32_t> events_;
};

} // namespace tcmud::test
