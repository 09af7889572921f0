// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One queue's channel to an rbd_backstore.
//
// Each request becomes one librbd aio call (readv, writev, flush, discard,
// write_zeroes, compare_and_write). librbd completes it on one of its own
// threads; our callback there only pushes the request onto this queue's
// lock-free completion list (one compare-and-swap) and, if the list was
// empty, bumps this queue's eventfd. The queue's io_uring keeps a read of
// that eventfd pending, so completions are reaped by the queue's own event
// loop, in its thread, together with its ring doorbell: no thread per
// command, no lock and no allocation of ours per command (requests are
// pooled and reused once the pool has grown to the queue depth). A read,
// not a poll: the ring's read resets the counter as it completes, where a
// poll needed a read(2) of our own after every wake-up (measured: docs/rbd.md).
//
// Not librbd's own rbd_set_image_notification/rbd_poll_io_events: that
// signals one eventfd per image handle, and the handle is shared by all
// queues of a device (the exclusive lock belongs to a handle, see
// rbd_backstore.h), so it could not say which queue a completion is for.
// It costs the same (librbd pushes onto a lock-free queue and writes the
// eventfd per completion); we coalesce the writes.
//
// What librbd allocates per call, which we cannot avoid: the AioCompletion
// (rbd_aio_create_completion), its internal image/object requests, and for
// writes a bufferlist copy of the data (rbd_disable_zero_copy_writes is on
// by default, so our buffers are free again once the call returns).
//
// Lifetime: destroy only after every submitted request has completed (the
// queue worker drains first); the destructor still waits, bounded, for
// stragglers, since librbd would call back into it.
#include <rbd/librbd.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "rbd/rbd_backstore.h"
#include "tcmud/backstore.h"
#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud {

class rbd_queue final : public backstore_queue {
public:
	// image: the queue's own handle if owns_image (measurement only), else
	// unused: each request takes the device's current one (io_image()).
	// The queue, or why not (its eventfd); an owned image is closed either way.
	static setup_result<std::unique_ptr<rbd_queue>> open(rbd_backstore &store,
							     io_engine &engine,
							     rbd_image_t image, bool owns_image);
	~rbd_queue() override;
	rbd_queue(const rbd_queue &) = delete;
	rbd_queue &operator=(const rbd_queue &) = delete;

	void submit(block_io &io) override;

	size_t in_flight() const { return in_flight_; }

private:
	rbd_queue(rbd_backstore &store, io_engine &engine, rbd_image_t image, bool owns_image);

	struct request;
	// The eventfd read's completion, and the SQ-full retry of its arming.
	struct signal_done final : io_completion {
		rbd_queue *queue = nullptr;
		void io_done(int64_t result) override { queue->on_signal(result); }
	};
	struct sqe_waiter final : io_completion {
		rbd_queue *queue = nullptr;
		void io_done(int64_t) override { queue->arm(); }
	};

	static void librbd_done(rbd_completion_t c, void *arg);
	request *acquire(block_io &io);
	int validate(const block_io &io) const;
	int start(request *req);
	int start_on(request *req, rbd_image_t image);
	int start_flush(request *req);
	void forget_flushed(uint64_t seen);
	rbd_image_t image() const { return owns_image_ ? image_ : store_.io_image(); }
	void set_in_flight(size_t n);
	// The window in which this queue may touch the device's session
	// (rbd_backstore.h): set before the state check, cleared after
	// librbd's call returned.
	struct window {
		explicit window(rbd_queue_probe &p) : probe(p)
		{
			probe.in_submit.store(true, std::memory_order_seq_cst);
		}
		~window() { probe.in_submit.store(false, std::memory_order_release); }
		rbd_queue_probe &probe;
	};
	void arm();
	void on_signal(int64_t result);
	void reap(request *list);
	void finish(request *req, int64_t result);
	void complete(request *req, int64_t result);
	size_t wait_for_stragglers();

	rbd_backstore &store_;
	io_engine &engine_;
	rbd_image_t image_;
	bool owns_image_;
	signal_done signal_;
	sqe_waiter waiter_;
	bool armed_ = false;
	bool logged_signal_error_ = false;

	// What librbd's threads touch: pushed by them, taken whole by ours.
	// Separate from the queue so that it can outlive it (see ~rbd_queue).
	struct mailbox {
		std::atomic<request *> head{nullptr};
		unique_fd efd;
		uint64_t count = 0;  // the ring's pending read lands here
	};
	std::unique_ptr<mailbox> box_ = std::make_unique<mailbox>();
	std::unique_ptr<rbd_queue_probe> probe_ = std::make_unique<rbd_queue_probe>();
	std::vector<std::unique_ptr<request>> pool_;
	std::vector<request *> free_;
	size_t in_flight_ = 0;  // given to librbd, not yet reaped (queue thread)
};

} // namespace tcmud
