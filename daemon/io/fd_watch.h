// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A POLLIN watch on one fd (the /dev/uioN doorbell), kept armed through the
// engine's io_uring. It uses a multishot poll and re-arms whenever the kernel
// ends one (CQ overflow, or a kernel without multishot poll, where it falls
// back to one-shot polls). Owned by the engine; see uring_engine::watch_readable.
#include <cstdint>

#include "io/cqe_completion.h"
#include "tcmud/io_completion.h"

namespace tcmud {

class uring_engine;

class fd_watch final : public cqe_completion, private io_completion {
public:
	fd_watch(uring_engine &engine, int fd, io_completion *target);

	void arm();
	// The target is not called again; the poll is removed in the io_uring.
	void cancel();
	// Cancelled and nothing of it is left in the io_uring: safe to free.
	bool finished() const { return !target_ && !armed_ && !waiting_for_sqe_; }
	// A multishot poll (without IORING_POLL_ADD_LEVEL) posts a CQE for each
	// wake-up of the fd's wait queue that finds it readable, so the target
	// need not consume what made it readable. A one-shot poll, re-armed
	// after each CQE, would complete again at once on a still-readable fd.
	bool edge_triggered() const { return multishot_; }

	void on_cqe(int32_t result, uint32_t flags) override;

private:
	// Called by the engine when an SQE may be free again.
	void io_done(int64_t result) override;
	void request_remove();

	uring_engine &engine_;
	int fd_;
	io_completion *target_;
	bool multishot_ = true;
	bool armed_ = false;
	bool waiting_for_sqe_ = false;
};

} // namespace tcmud
