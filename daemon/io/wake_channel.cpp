// SPDX-License-Identifier: GPL-2.0-or-later
#include "io/wake_channel.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "io/uring_engine.h"
#include "log/log.h"

namespace tcmud {

wake_channel::wake_channel(uring_engine &engine) : engine_(engine) {}

setup_result<void> wake_channel::open()
{
	int fd = ::eventfd(0, EFD_CLOEXEC);
	if (fd < 0)
		return setup_error{errno, "cannot create the io_uring's wake-up eventfd"};
	efd_.reset(fd);
	arm();
	return {};
}

void wake_channel::arm()
{
	if (armed_ || waiting_for_sqe_)
		return;
	io_uring_sqe *sqe = engine_.get_sqe_for(this);
	if (!sqe) {
		waiting_for_sqe_ = true;
		engine_.wait_for_sqe(this);
		return;
	}
	io_uring_prep_read(sqe, efd_.get(), &count_, sizeof(count_), 0);
	armed_ = true;
}

void wake_channel::io_done(int64_t)
{
	waiting_for_sqe_ = false;
	arm();
}

int wake_channel::notify()
{
	uint64_t one = 1;
	ssize_t n = ::write(efd_.get(), &one, sizeof(one));
	if (n < 0)
		return -errno;
	// A short write sets no errno: do not report a stale one.
	return n == sizeof(one) ? 0 : -EIO;
}

void wake_channel::on_cqe(int32_t result, uint32_t)
{
	armed_ = false;
	if (result == static_cast<int32_t>(sizeof(count_))) {
		uint64_t count = count_;
		arm();
		if (done_)
			done_->io_done(static_cast<int64_t>(count));
		return;
	}
	if (result == -ECANCELED)
		return; // the engine is shutting down
	if (result == -EINTR || result == -EAGAIN) {
		arm();
		return;
	}
	// Anything else would fail again at once; a busy loop helps nobody.
	log_error("", "io: wake channel read failed: %d; cross-thread wake-ups stop",
		  result);
}

} // namespace tcmud
