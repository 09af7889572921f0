// SPDX-License-Identifier: GPL-2.0-or-later
#include "io/fd_watch.h"

#include <poll.h>

#include <cerrno>

#include "io/uring_engine.h"

namespace tcmud {

fd_watch::fd_watch(uring_engine &engine, int fd, io_completion *target)
	: engine_(engine), fd_(fd), target_(target)
{
}

void fd_watch::arm()
{
	if (!target_ || armed_ || waiting_for_sqe_)
		return;
	io_uring_sqe *sqe = engine_.get_sqe_for(this);
	if (!sqe) {
		// A full SQ must not lose the doorbell: arm again after the
		// engine's next reap.
		waiting_for_sqe_ = true;
		engine_.wait_for_sqe(this);
		return;
	}
	if (multishot_)
		io_uring_prep_poll_multishot(sqe, fd_, POLLIN);
	else
		io_uring_prep_poll_add(sqe, fd_, POLLIN);
	armed_ = true;
}

void fd_watch::io_done(int64_t)
{
	waiting_for_sqe_ = false;
	arm();
}

void fd_watch::cancel()
{
	if (target_)
		engine_.watch_ending();
	target_ = nullptr;
	if (armed_)
		request_remove();
}

void fd_watch::request_remove()
{
	// The removal's own completion carries user_data 0 and is ignored. If
	// the SQ is full the poll stays armed; its next CQE retries this.
	io_uring_sqe *sqe = engine_.get_sqe(nullptr);
	if (!sqe)
		return;
	io_uring_prep_poll_remove(sqe, reinterpret_cast<uintptr_t>(this) | 1u);
}

void fd_watch::on_cqe(int32_t result, uint32_t flags)
{
	bool more = flags & IORING_CQE_F_MORE;
	if (!more)
		armed_ = false;
	if (!target_) {
		if (more)
			request_remove();
		return;
	}
	if (result == -EINVAL && multishot_ && !more) {
		// A kernel before 5.13 has no multishot poll.
		multishot_ = false;
		arm();
		return;
	}
	if (result < 0) {
		io_completion *target = target_;
		if (!more) {
			target_ = nullptr; // the watch is dead; say so once
			engine_.watch_ending();
		}
		target->io_done(result);
		return;
	}
	// Re-arm before telling the target, so a doorbell that rings while the
	// target works is not missed.
	if (!more)
		arm();
	target_->io_done(result);
}

} // namespace tcmud
