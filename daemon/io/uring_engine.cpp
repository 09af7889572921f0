// SPDX-License-Identifier: GPL-2.0-or-later
#include "io/uring_engine.h"

#include <poll.h>

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "log/log.h"

#ifdef TCMUD_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

namespace tcmud {
namespace {

constexpr uint64_t internal_tag = 1;

// Most wanted first. SINGLE_ISSUER + DEFER_TASKRUN (6.1) keep completion
// work on our own thread, run when we enter the kernel anyway; COOP_TASKRUN
// (5.19) at least avoids interrupting us with IPIs. TASKRUN_FLAG tells
// liburing when pending work needs an enter before a peek can see it.
constexpr unsigned setup_attempts[] = {
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN |
		IORING_SETUP_TASKRUN_FLAG,
	IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
	0,
};

// valgrind (3.19, Debian 12) does not know that io_uring_enter can block:
// it keeps its one-thread-at-a-time lock through the wait, so no other
// thread of the process runs until a completion arrives (liburing issue
// #657), and a short timeout does not help either: the lock is only handed
// over at a syscall valgrind knows may block, or after a long time slice.
// A queue worker waiting for a doorbell that only the control thread or
// another queue's worker can cause then waits forever: that was why tcmud
// "never answered" under callgrind on a multi-queue device or on a device
// created while it ran. Under valgrind only, a wait is a non-blocking enter
// plus a poll() of at most 1 ms, which valgrind does release its lock for.
bool under_valgrind()
{
#ifdef TCMUD_HAVE_VALGRIND_H
	return RUNNING_ON_VALGRIND;
#else
	return false;
#endif
}

} // namespace

setup_result<std::unique_ptr<uring_engine>> uring_engine::create(const uring_options &opts)
{
	std::unique_ptr<uring_engine> engine(new uring_engine());
	if (auto set_up = engine->setup(opts); !set_up)
		return set_up.error();
	return engine;
}

setup_result<void> uring_engine::setup(const uring_options &opts)
{
	int ret = -EINVAL;
	for (unsigned flags : setup_attempts) {
		if (!opts.defer_taskrun && (flags & IORING_SETUP_DEFER_TASKRUN))
			continue;
		io_uring_params params{};
		params.flags = flags;
		ret = io_uring_queue_init_params(opts.entries, &uring_, &params);
		// EINVAL: this kernel does not know one of the flags; try fewer.
		if (ret != -EINVAL)
			break;
	}
	if (ret < 0)
		return setup_error{-ret, "io_uring setup failed (" + std::to_string(opts.entries) +
					 " entries)"};
	uring_ready_ = true;
	under_valgrind_ = under_valgrind();
	// io_engine::get_sqe_uncleared() fills the SQ in place: only where it
	// follows liburing's own rules for it (64-byte SQEs, the head moved by
	// our enter alone).
	if (!(uring_.flags & (IORING_SETUP_SQPOLL | IORING_SETUP_SQE128))) {
		direct_sq_ = &uring_.sq;
		direct_in_flight_ = &in_flight_;
	}
	fixed_files_.assign(opts.fixed_files, -1);
	waiters_.reserve(64);
	waiters_running_.reserve(64);
	waker_ = std::make_unique<wake_channel>(*this);
	return waker_->open();
}

uring_engine::~uring_engine()
{
	if (!uring_ready_)
		return;
	drain_for_exit();
	io_uring_queue_exit(&uring_);
}

// The kernel may still be writing into buffers of requests in flight, and
// those buffers belong to objects about to be freed: cancel everything and
// wait (bounded) for the last CQEs, without dispatching them.
void uring_engine::drain_for_exit()
{
	if (io_uring_sqe *sqe = next_sqe(0)) {
		io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	}
	unsigned idle_rounds = 0;
	while (in_flight_ > 0 && idle_rounds < 20) {
		__kernel_timespec ts{.tv_sec = 0, .tv_nsec = 50'000'000};
		io_uring_cqe *cqe = nullptr;
		int ret = io_uring_submit_and_wait_timeout(&uring_, &cqe, 1, &ts, nullptr);
		if (ret < 0 && ret != -ETIME && ret != -EINTR)
			break;
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&uring_, head, cqe) {
			if (cqe->user_data != LIBURING_UDATA_TIMEOUT &&
			    !(cqe->flags & IORING_CQE_F_MORE) && in_flight_ > 0)
				in_flight_--;
			seen++;
		}
		io_uring_cq_advance(&uring_, seen);
		idle_rounds = seen ? 0 : idle_rounds + 1;
	}
	if (in_flight_ > 0)
		log_warn("", "io: %u operations still in flight at io_uring exit",
			 in_flight_);
}

io_uring_sqe *uring_engine::next_sqe(uint64_t user_data, bool clear)
{
	// The same claim as io_engine::get_sqe_uncleared()'s inline path
	// wherever the SQ allows it (always, with the flags set up here).
	auto claim = [this] {
		return direct_sq_ ? claim_sqe(*direct_sq_) : io_uring_get_sqe(&uring_);
	};
	io_uring_sqe *sqe = claim();
	if (!sqe) {
		// Full: hand what is queued to the kernel and try once more.
		io_uring_submit(&uring_);
		sqe = claim();
		if (!sqe)
			return nullptr;
	}
	if (clear)
		memset(sqe, 0, sizeof(*sqe));
	io_uring_sqe_set_data64(sqe, user_data);
	in_flight_++;
	return sqe;
}

io_uring_sqe *uring_engine::get_sqe(io_completion *done)
{
	return next_sqe(reinterpret_cast<uintptr_t>(done));
}

io_uring_sqe *uring_engine::get_sqe_uncleared_slow(io_completion *done)
{
	return next_sqe(reinterpret_cast<uintptr_t>(done), false);
}

io_uring_sqe *uring_engine::get_sqe_for(cqe_completion *done)
{
	return next_sqe(reinterpret_cast<uintptr_t>(done) | internal_tag);
}

void uring_engine::wait_for_sqe(io_completion *waiter)
{
	waiters_.push_back(waiter);
}

int uring_engine::submit()
{
	int ret = io_uring_submit(&uring_);
	return ret < 0 ? ret : 0;
}

int uring_engine::run_once(unsigned min_complete, const __kernel_timespec *timeout)
{
	int ret;
	// Waiters for an SQE must not sit through a long wait: they get their
	// retry after this round's submit, which freed the SQ.
	if (!waiters_.empty())
		min_complete = 0;
	if (min_complete == 0) {
		// With DEFER_TASKRUN completions are only posted inside an
		// enter, so a non-waiting round must still enter once.
		ret = io_uring_submit_and_get_events(&uring_);
	} else if (under_valgrind_) [[unlikely]] {
		ret = io_uring_submit_and_get_events(&uring_);
		if (ret >= 0 && io_uring_cq_ready(&uring_) == 0) {
			pollfd p{uring_.ring_fd, POLLIN, 0};
			poll(&p, 1, 1);
			ret = io_uring_submit_and_get_events(&uring_);
		}
	} else if (!timeout) {
		// Every round of a busy worker: one enter that submits and waits.
		// The CQEs are reaped below, so liburing's CQE peeking around the
		// enter (submit_and_wait_timeout's path) would only repeat it.
		ret = io_uring_submit_and_wait(&uring_, min_complete);
	} else {
		io_uring_cqe *cqe = nullptr;
		__kernel_timespec ts = *timeout;
		ret = io_uring_submit_and_wait_timeout(&uring_, &cqe, min_complete, &ts, nullptr);
	}
	if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN &&
	    ret != -EBUSY)
		return ret;
	int reaped = reap();
	call_waiters();
	if (watches_ending_) [[unlikely]]
		collect_finished_watches();
	return reaped;
}

int uring_engine::run()
{
	while (!stop_requested()) {
		int ret = run_once(1);
		if (ret < 0)
			return ret;
	}
	return 0;
}

// Each CQE is read into registers and its slot handed back to the kernel
// (the head advanced) before it is dispatched, so completions that submit
// more work find the CQ space free; no copy of the CQEs is kept. One
// acquire load of the tail per pass, not one per CQE as
// io_uring_for_each_cqe does: it orders every CQE read below it.
int uring_engine::reap()
{
	int total = 0;
	unsigned *khead = uring_.cq.khead;
	const unsigned mask = uring_.cq.ring_mask, shift = io_uring_cqe_shift(&uring_);
	for (;;) {
		unsigned head = *khead;
		const unsigned tail = io_uring_smp_load_acquire(uring_.cq.ktail);
		if (head == tail)
			return total;
		do {
			const io_uring_cqe &cqe = uring_.cq.cqes[(head & mask) << shift];
			const uint64_t data = cqe.user_data;
			const int32_t res = cqe.res;
			const uint32_t flags = cqe.flags;
			io_uring_smp_store_release(khead, ++head);
			dispatch(data, res, flags);
			total++;
		} while (head != tail);
	}
}

void uring_engine::dispatch(uint64_t data, int32_t res, uint32_t flags)
{
	// A request's own io_completion (bit 0 clear, not 0), nearly every
	// CQE, is told apart with two tests before the rarer kinds.
	if (!(data & internal_tag) && data != 0) [[likely]] {
		if (!(flags & IORING_CQE_F_MORE) && in_flight_ > 0)
			in_flight_--;
		reinterpret_cast<io_completion *>(data)->io_done(res);
		return;
	}
	if (data == LIBURING_UDATA_TIMEOUT)
		return; // liburing's own wait timeout on kernels without EXT_ARG
	if (!(flags & IORING_CQE_F_MORE) && in_flight_ > 0)
		in_flight_--;
	if (data == 0)
		return; // fire-and-forget (cancellations)
	auto *done = reinterpret_cast<cqe_completion *>(data & ~internal_tag);
	done->on_cqe(res, flags);
}

void uring_engine::call_waiters()
{
	if (waiters_.empty())
		return;
	// A waiter that still finds no room queues itself again; it must land
	// in the next round, not this one, or it would spin here.
	waiters_running_.swap(waiters_);
	for (io_completion *waiter : waiters_running_)
		waiter->io_done(0);
	waiters_running_.clear();
}

int uring_engine::watch_readable(int fd, io_completion *target)
{
	size_t id = 0;
	while (id < watches_.size() && watches_[id])
		id++;
	if (id == watches_.size())
		watches_.emplace_back();
	watches_[id] = std::make_unique<fd_watch>(*this, fd, target);
	watches_[id]->arm();
	return static_cast<int>(id);
}

void uring_engine::unwatch(int watch_id)
{
	if (watch_id < 0 || static_cast<size_t>(watch_id) >= watches_.size())
		return;
	if (watches_[watch_id])
		watches_[watch_id]->cancel();
}

// A cancelled watch is freed only once its last CQE has come back, since
// that CQE carries the watch's address.
void uring_engine::collect_finished_watches()
{
	for (auto &watch : watches_) {
		if (watch && watch->finished()) {
			watch.reset();
			watches_ending_--;
		}
	}
}

void uring_engine::watch_ending()
{
	watches_ending_++;
}

void uring_engine::set_wake_completion(io_completion *done)
{
	waker_->set_completion(done);
}

int uring_engine::wake()
{
	return waker_->notify();
}

void uring_engine::request_stop()
{
	stop_.store(true, std::memory_order_release);
	wake();
}

bool uring_engine::stop_requested() const
{
	return stop_.load(std::memory_order_acquire);
}

// liburing returns -errno: negated into the setup_error first.
setup_result<int> uring_engine::register_file(int fd)
{
	const std::string what = "cannot register fd " + std::to_string(fd) + " as a fixed file";
	if (!fixed_files_registered_) {
		int ret = io_uring_register_files_sparse(
			&uring_, static_cast<unsigned>(fixed_files_.size()));
		if (ret < 0)
			return setup_error{-ret, what + " (reserving " +
							 std::to_string(fixed_files_.size()) + " indices)"};
		fixed_files_registered_ = true;
	}
	for (size_t index = 0; index < fixed_files_.size(); index++) {
		if (fixed_files_[index] != -1)
			continue;
		int ret = io_uring_register_files_update(
			&uring_, static_cast<unsigned>(index), &fd, 1);
		if (ret < 0)
			return setup_error{-ret, what + " at index " + std::to_string(index)};
		fixed_files_[index] = fd;
		return static_cast<int>(index);
	}
	return setup_error{ENFILE, what + ": no free index (" +
					   std::to_string(fixed_files_.size()) + " reserved)"};
}

void uring_engine::unregister_file(int index)
{
	if (index < 0 || static_cast<size_t>(index) >= fixed_files_.size() ||
	    fixed_files_[index] == -1)
		return;
	int none = -1;
	io_uring_register_files_update(&uring_, static_cast<unsigned>(index),
				       &none, 1);
	fixed_files_[index] = -1;
}

setup_result<fixed_buffer_registration> uring_engine::register_buffers(std::span<std::byte> area)
{
	const std::string what = "cannot register " + std::to_string(area.size() >> 10) +
				 " KiB as io_uring fixed buffers";
	if (fixed_area_.size)
		return setup_error{EBUSY, what + ": buffers are registered already"};
	if (area.empty())
		return setup_error{EINVAL, what + ": nothing to register"};
	constexpr size_t chunk = size_t(1) << fixed_buffer_shift;
	std::vector<iovec> buffers;
	for (size_t at = 0; at < area.size(); at += chunk)
		buffers.push_back({area.data() + at, std::min(chunk, area.size() - at)});
	int ret = io_uring_register_buffers(&uring_, buffers.data(),
					    static_cast<unsigned>(buffers.size()));
	if (ret < 0)
		return setup_error{-ret, what + " (" + std::to_string(buffers.size()) +
						 " buffers)"};
	fixed_area_ = {reinterpret_cast<uintptr_t>(area.data()), area.size()};
	return fixed_buffer_registration(*this);
}

void uring_engine::unregister_buffers()
{
	if (!fixed_area_.size)
		return;
	fixed_area_ = {};
	if (int ret = io_uring_unregister_buffers(&uring_); ret < 0)
		log_warn("", "io: unregistering the fixed buffers failed: %s", strerror(-ret));
}

void fixed_buffer_registration::reset()
{
	if (engine_)
		std::exchange(engine_, nullptr)->unregister_buffers();
}

} // namespace tcmud
