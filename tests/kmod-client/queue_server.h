// SPDX-License-Identifier: GPL-2.0-or-later
// Serves one TCMU command ring (one queue of a multi-queue device, or the
// whole classic ring) from one thread: consumes entries, runs them on the
// RAM disk, completes each batch in reverse order and writes the queue
// index to the uio fd.
#pragma once

#include "ram_disk.h"

#include <atomic>
#include <bitset>
#include <cstdint>
#include <vector>

namespace kmod_client {

struct tcmu_mailbox;

// Where one queue lives in our mapping. Offsets the kernel writes into the
// queue's entries are relative to `mailbox`.
struct queue_layout {
	uint8_t *mailbox;
	uint64_t ring_size;  // mailbox + command ring; the data area starts here
	uint64_t data_size;
};

// Counters read by the main thread while the queue runs.
struct queue_stats {
	std::atomic<uint64_t> received{0};     // command entries consumed
	std::atomic<uint64_t> completed{0};    // responses written and cmd_tail advanced past
	std::atomic<uint64_t> tmr{0};          // TMR entries seen
	std::atomic<uint64_t> tmr_ids{0};      // aborted cmd_ids those entries listed
	std::atomic<uint64_t> held{0};         // consumed, not completed while held
	std::atomic<uint64_t> wakeups{0};      // waits that ended with an event
	// Wakeups that found nothing new on this queue: an entry we had already
	// drained signalled late (another queue's entries wake its own device).
	std::atomic<uint64_t> empty_wakeups{0};
	std::atomic<uint64_t> batches{0};      // completion writes to the uio fd
	std::atomic<uint64_t> duplicates{0};   // a cmd_id received while outstanding
	std::atomic<uint64_t> bad_entries{0};  // entries failing a bounds check
	std::atomic<uint64_t> write_errors{0}; // failed completion writes
	std::atomic<uint64_t> unserved{0};     // ring bytes left unconsumed at exit
	std::atomic<uint32_t> seen{0};         // ring offset up to which we consumed
	std::atomic<uint32_t> tail{0};         // the cmd_tail we last published
};

class queue_server {
public:
	// uio_fd: this queue's own uio device (woken by, completed on). While `held`
	// equals this queue's index, the queue consumes entries but completes
	// none (a stalled daemon thread, for the kernel's per-queue timers and
	// TMRs); the held commands complete once it changes.
	queue_server(uint32_t index, queue_layout layout, int uio_fd, ram_disk &disk, const std::atomic<bool> &stop,
		     const std::atomic<int> &held);

	// Validates the mailbox; false (with a message) if it cannot be served.
	bool check_mailbox();
	// The thread body: returns on stop, device removal or a broken ring.
	void run();

	const queue_stats &stats() const { return stats_; }
	uint32_t index() const { return index_; }
	// The kernel's current cmd_head (diagnostics only).
	uint32_t kernel_head() const;

private:
	struct command {
		uint16_t cmd_id;
		scsi_result result;
	};

	bool wait_for_event();
	bool drain();
	bool consume(uint32_t head);
	bool take_command(uint32_t pos, uint32_t len);
	void complete_batch();
	void skip_non_commands();
	bool is_held() const { return held_.load(std::memory_order_relaxed) == static_cast<int>(index_); }
	uint8_t *entry(uint32_t pos) const { return ring_ + pos; }

	uint32_t index_;
	queue_layout layout_;
	int uio_fd_;
	ram_disk &disk_;
	const std::atomic<bool> &stop_;
	const std::atomic<int> &held_;
	tcmu_mailbox *mb_;
	uint8_t *ring_ = nullptr;
	uint32_t cmdr_size_ = 0;
	uint32_t head_seen_ = 0;  // next entry to consume
	uint32_t tail_ = 0;       // our cmd_tail
	bool trace_;
	bool woke_ = false;  // the last wait ended with an event
	bool broken_ = false;
	std::vector<command> batch_;
	std::bitset<65536> outstanding_;
	queue_stats stats_;
};

}  // namespace kmod_client
