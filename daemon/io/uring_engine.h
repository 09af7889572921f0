// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One queue's io_uring and the loop that drives it.
//
// Ownership: a uring_engine belongs to one thread, the one that creates it
// (with IORING_SETUP_SINGLE_ISSUER the kernel binds the io_uring to its creator)
// and calls run_once(). Only wake() and request_stop() may be called from
// other threads. Completions are dispatched on the owning thread, in
// batches, each exactly once.
//
// user_data is either an io_completion pointer (bit 0 clear: objects are
// aligned) or, with bit 0 set, one of the engine's own cqe_completions.
#include <liburing.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "io/cqe_completion.h"
#include "io/fd_watch.h"
#include "io/wake_channel.h"
#include "tcmud/defaults.h"
#include "tcmud/io_engine.h"
#include "tcmud/setup_result.h"

namespace tcmud {

struct uring_options {
	unsigned entries = default_uring_entries; // SQ size (CQ is twice that)
	bool defer_taskrun = true;  // false: never ask for DEFER_TASKRUN
	unsigned fixed_files = 16;  // fixed-file indices for register_file()
};

class uring_engine;

// The data area registered as fixed buffers on one uring_engine, until this
// goes (or release()). Its owner destroys it after every backstore queue
// that read fixed_buffers() is closed and before the engine, with nothing
// in flight: unregistering waits for requests still using the buffers.
class fixed_buffer_registration {
public:
	fixed_buffer_registration() = default;
	explicit fixed_buffer_registration(uring_engine &engine) : engine_(&engine) {}
	~fixed_buffer_registration() { reset(); }
	fixed_buffer_registration(fixed_buffer_registration &&o) noexcept
		: engine_(std::exchange(o.engine_, nullptr))
	{
	}
	fixed_buffer_registration &operator=(fixed_buffer_registration &&o) noexcept
	{
		if (this != &o) {
			reset();
			engine_ = std::exchange(o.engine_, nullptr);
		}
		return *this;
	}
	explicit operator bool() const { return engine_ != nullptr; }
	void reset();
	// Forget the registration without unregistering (the engine is being
	// leaked with I/O in flight: see queue_worker::abandon).
	void release() { engine_ = nullptr; }

private:
	uring_engine *engine_ = nullptr;
};

class uring_engine final : public io_engine {
public:
	// The engine, or why no io_uring could be set up (the caller logs it).
	static setup_result<std::unique_ptr<uring_engine>> create(const uring_options &opts);
	~uring_engine();
	uring_engine(const uring_engine &) = delete;
	uring_engine &operator=(const uring_engine &) = delete;

	io_uring_sqe *get_sqe(io_completion *done) override;
	void wait_for_sqe(io_completion *waiter) override;
	setup_result<int> register_file(int fd) override;
	void unregister_file(int index) override;

	// Registers `area` (page aligned) as fixed buffers, one per 1 GiB
	// (fixed_buffer_shift), so READ_FIXED/WRITE_FIXED can use it without
	// pinning its pages per I/O. Only for memory whose pages never change
	// while registered (ring_geometry::data_area_fixed). Set-up: the
	// registration (unregistered when it goes), or why not (ENOMEM, or
	// EPERM/ENOMEM over RLIMIT_MEMLOCK without CAP_IPC_LOCK; EBUSY if
	// buffers are registered already).
	setup_result<fixed_buffer_registration> register_buffers(std::span<std::byte> area);
	fixed_buffer_area fixed_buffers() const override { return fixed_area_; }

	// Submits pending SQEs, waits until min_complete completions are ready
	// or the timeout passes (nullptr: no timeout; min_complete 0, or any
	// wait_for_sqe() caller pending: no wait), then dispatches every ready
	// completion and calls the waiters. Returns the number of completions
	// dispatched, or -errno if the io_uring itself failed.
	int run_once(unsigned min_complete, const __kernel_timespec *timeout = nullptr);
	// run_once(1) until request_stop(); returns 0 or the first io_uring error.
	int run();
	// Pushes pending SQEs to the kernel without waiting.
	int submit();

	// Calls target->io_done(revents) on the owning thread each time fd
	// becomes readable (multishot POLLIN, re-armed when the kernel ends it),
	// or io_done(-errno) once if the watch fails. Returns the watch id
	// (>= 0). It cannot fail here: a full SQ arms the poll after the next
	// reap, and a failure of the poll itself arrives as io_done(-errno).
	// After unwatch() the target is never called again.
	int watch_readable(int fd, io_completion *target);
	void unwatch(int watch_id);
	// True while the watch reports wake-ups rather than a readable state
	// (fd_watch::edge_triggered): its target may leave the fd readable.
	bool watch_edge_triggered(int watch_id) const
	{
		return static_cast<size_t>(watch_id) < watches_.size() && watches_[watch_id] &&
		       watches_[watch_id]->edge_triggered();
	}

	// done->io_done(count) runs on the owning thread after wake().
	void set_wake_completion(io_completion *done);
	// Any thread: make run_once() return soon (and call the wake completion).
	int wake();
	// Any thread: wake and make run() return.
	void request_stop();
	bool stop_requested() const;

	// For the engine's own helpers: an SQE whose completion goes to
	// done->on_cqe() with the CQE flags. nullptr if the SQ is full.
	io_uring_sqe *get_sqe_for(cqe_completion *done);

	unsigned setup_flags() const { return uring_.flags; }
	// Operations submitted (or prepared) whose last CQE has not arrived,
	// the engine's own wake-channel read (always one) included.
	unsigned in_flight() const { return in_flight_; }

protected:
	io_uring_sqe *get_sqe_uncleared_slow(io_completion *done) override;

private:
	uring_engine() = default;
	setup_result<void> setup(const uring_options &opts);
	// Inline into get_sqe() and get_sqe_for(): every request takes an
	// SQE, and out of line it was a call and a prologue more.
	[[gnu::always_inline]] inline io_uring_sqe *next_sqe(uint64_t user_data,
							     bool clear = true);
	int reap();
	void dispatch(uint64_t data, int32_t res, uint32_t flags);
	void call_waiters();
	void collect_finished_watches();
	// fd_watch: its target is gone (unwatched, or the poll failed for
	// good), so it is freed once finished(). Until then each round looks.
	void watch_ending();
	friend class fd_watch;
	void drain_for_exit();

	io_uring uring_{};
	bool uring_ready_ = false;
	bool under_valgrind_ = false; // asked once: see run_once()
	unsigned in_flight_ = 0;
	std::vector<io_completion *> waiters_;
	std::vector<io_completion *> waiters_running_;
	std::vector<int> fixed_files_; // -1: free index
	bool fixed_files_registered_ = false;
	fixed_buffer_area fixed_area_;
	friend class fixed_buffer_registration;
	void unregister_buffers();
	std::vector<std::unique_ptr<fd_watch>> watches_;
	unsigned watches_ending_ = 0; // watches whose target is gone, not yet freed
	std::unique_ptr<wake_channel> waker_;
	std::atomic<bool> stop_{false};
};

} // namespace tcmud
