// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One TCMU command ring served by one thread.
//
// The worker's thread owns everything on the data path of its queue: the
// command ring, the io_uring (created on that thread), the backstore's queue
// channel and the command slots. The uio doorbell, backing-file I/O and
// cross-thread wake-ups all arrive through that one io_uring, so a batch of
// commands costs one io_uring_enter() and a batch of completions one write()
// to the uio fd. Nothing here is shared with another queue; the only thing a
// foreign thread may touch is the wake list (COMPARE AND WRITE range-lock
// grants and stop requests), which is off the data path.
#include <array>
#include <atomic>
#include <condition_variable>
#include <optional>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/reset_barrier.h"
#include "device/uio_device.h"
#include "io/uring_engine.h"
#include "ring/command_ring.h"
#include "scsi/command.h"
#include "scsi/logical_unit.h"
#include "stats/queue_stats.h"
#include "tcmud/backstore.h"
#include "tcmud/defaults.h"
#include "tcmud/setup_result.h"

namespace tcmud {

struct queue_params {
	std::span<std::byte> map;      // this queue's mailbox, ring and data area
	// This queue's uio device: it becomes readable when the kernel queues
	// entries on this queue (on the multi-queue ABI each queue has its own,
	// so no other queue's commands wake us), and a write hands this queue's
	// completions to the kernel.
	uio_channel uio;
	uint32_t queue_index = 0;      // for logs and statistics
	int cpu = -1;                  // pin the thread to this CPU, -1: don't
	std::string log_prefix;        // "file/lun0:"
	scsi::logical_unit *lu = nullptr;
	backstore *store = nullptr;
	ring_options ring;
	unsigned uring_entries = default_uring_entries;
	// tcmud.conf fixed_buffers: where the mailbox has
	// TCMU_MAILBOX_FLAG_CAP_DATA_FIXED, register the data area as io_uring
	// fixed buffers at start (and unregister at stop). Without the bit
	// nothing is registered whatever this says.
	bool fixed_buffers = true;
	// The device's ring resets (reset_barrier.h), shared by all its
	// queues: asked for when this worker finds its ring broken (lost
	// framing), or when backing I/O of commands the kernel failed in a
	// reset it started on its own has ended (commands queued meanwhile may
	// have data blocks that I/O wrote into). Performed once no queue of
	// the device has anything in flight: block_dev, reset_ring (BUSY:
	// whatever is in the ring is retried by the initiator), unblock_dev.
	// Unset: the worker makes one of its own from reset_ring.
	std::shared_ptr<reset_barrier> resets;
	// For a worker alone on its device (tests): its barrier's reset.
	// Unset too: such a ring stays stopped.
	std::function<int()> reset_ring;
};

// The counters this worker's thread writes and the control socket reads
// (stats/queue_stats.h).
using queue_stats = stats::queue_stats;

class queue_worker {
public:
	explicit queue_worker(queue_params params);
	~queue_worker();
	queue_worker(const queue_worker &) = delete;
	queue_worker &operator=(const queue_worker &) = delete;

	// Starts the thread and waits until its ring and io_uring are set up;
	// else why not, naming the queue ("queue 1: unusable mailbox: ..."),
	// for the caller to log once. The thread has ended by then.
	setup_result<void> start();
	// Stops taking new commands, lets every command in flight finish (up to
	// drain_timeout_ms), hands the last completions to the kernel, joins.
	void stop(unsigned drain_timeout_ms = default_drain_timeout_ms);
	// The first half of stop(), not waiting: the loop stops taking commands
	// and starts its drain (default timeout). stop() then joins.
	void request_stop();

	// The watchdog (its thread): true if the worker's loop has run since
	// the previous probe; then sends the next one, which wakes the loop.
	bool probe_alive();
	// Test hook only (TCMUD_TEST_HOOKS=1, SIGUSR1): the loop blocks for ms
	// at its next wake-up, as a hung worker would.
	void stall_for_test(unsigned ms);

	const queue_stats &stats() const { return stats_; }
	uint32_t queue_index() const { return params_.queue_index; }
	// The sizes this queue was opened with (tcmud.conf at the device's add).
	size_t max_in_flight() const { return params_.ring.max_in_flight; }
	unsigned uring_entries() const { return params_.uring_entries; }
	// The CPU the thread was pinned to, -1 if none (or pinning failed).
	// Valid once start() returned.
	int cpu() const { return pinned_cpu_; }
	// Whether the data area is registered as io_uring fixed buffers.
	// Valid once start() returned.
	bool data_area_registered() const { return data_area_registered_; }
	// After stop(): the drain gave up with backing I/O still in flight, so
	// the command slots, the backstore queue and the io_uring were left
	// allocated (never freed: a late completion of that I/O must not land
	// in reused memory). The owner must then keep the mapping too.
	bool abandoned() const { return abandoned_; }

private:
	struct slot;
	class doorbell;
	class waker;

	void thread_main();
	setup_result<void> setup_on_thread();
	void register_data_area();
	void serve();
	void drain_ring();
	void dispatch(const ring_command &rc, uint64_t fetched_at);
	void refuse(const ring_malformed &bad);
	void task_management(const ring_tmr &tmr);
	// Inline into slot::command_done, its one caller: every command ends
	// here, and out of line it was a call more per command.
	[[gnu::always_inline]] inline void command_finished(slot &s);
	void flush_completions();
	void record_latencies();
	void ack_doorbell();
	int wake_fd() const;
	void poke();
	void resume_woken();
	void setup_done(setup_result<void> done);
	void drain_in_flight();
	void sync_ring();
	void ring_was_reset();
	bool hold_for_reset();
	void abandon();

	queue_params params_;
	queue_stats stats_;
	std::thread thread_;

	// Owned by the worker thread once it runs.
	std::unique_ptr<uring_engine> engine_;
	// The data area as the engine's fixed buffers, if registered; goes
	// after the backstore queue and before the engine.
	fixed_buffer_registration fixed_buffers_;
	std::optional<command_ring> ring_;
	std::unique_ptr<backstore_queue> backstore_queue_;
	std::unique_ptr<slot[]> slots_;
	slot *free_slots_ = nullptr; // a stack, linked through slot::next_free
	std::unique_ptr<doorbell> doorbell_;
	int doorbell_watch_ = -1; // engine_'s id for the uio fd's watch
	std::unique_ptr<waker> waker_;
	size_t busy_ = 0;
	bool completions_pending_ = false;
	// The last drain_ring() left entries for want of a slot, or the ring
	// is broken: drain again after completions (serve()).
	bool drain_again_ = false;
	bool recovery_given_up_ = false;
	// Commands the kernel failed in a reset while their backing I/O ran:
	// until the last one's I/O ends nothing is fetched, and then the ring
	// is reset once more (wants_reset_), so that commands queued meanwhile,
	// whose data blocks that I/O may have written, are retried (BUSY)
	// instead of served.
	size_t stale_busy_ = 0;
	bool wants_reset_ = false;
	bool at_barrier_ = false; // arrived at params_.resets, reset not seen yet
	size_t barrier_id_ = 0;
	bool abandoned_ = false;
	// When the completed but unpublished commands were fetched, as runs of
	// commands from one fetch (they share its clock read): their latency is
	// taken when the batch is published, one clock read and one bucket per
	// run, not per command.
	struct fetch_run {
		uint64_t fetched_at;
		uint64_t commands;
	};
	std::vector<fetch_run> unpublished_;

	// Cross-thread: range-lock grants from other queues, and stop.
	std::mutex woken_mutex_;
	std::vector<slot *> woken_;
	bool engine_alive_ = false; // guarded by woken_mutex_
	std::atomic<bool> stopping_{false};
	// Watchdog probes: sent by the control thread, answered by the loop.
	uint64_t probes_sent_ = 0; // the watchdog's thread only
	std::atomic<uint64_t> probe_sent_{0};
	std::atomic<uint64_t> probe_answered_{0};
	std::atomic<unsigned> test_stall_ms_{0};
	unsigned drain_timeout_ms_ = default_drain_timeout_ms;
	int pinned_cpu_ = -1; // set by the thread before start() returns
	bool data_area_registered_ = false; // likewise

	// start() waits for the thread's set-up result.
	std::mutex setup_mutex_;
	std::condition_variable setup_cv_;
	bool setup_finished_ = false;
	setup_result<void> setup_done_;
};

} // namespace tcmud
