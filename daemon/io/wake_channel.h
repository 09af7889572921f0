// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// How other threads reach a queue's loop: an eventfd whose read is kept
// pending in the io_uring, so a write from any thread completes it and ends the
// owner's io_uring_enter() wait. The fd is blocking on purpose: io_uring
// then waits for it by polling instead of failing with -EAGAIN.
#include <cstdint>

#include "io/cqe_completion.h"
#include "tcmud/unique_fd.h"
#include "tcmud/io_completion.h"
#include "tcmud/setup_result.h"

namespace tcmud {

class uring_engine;

class wake_channel final : public cqe_completion, private io_completion {
public:
	explicit wake_channel(uring_engine &engine);
	// Creates the eventfd and arms the read (set-up: the engine's create).
	setup_result<void> open();
	void set_completion(io_completion *done) { done_ = done; }
	// Thread-safe: adds one to the eventfd.
	int notify();

	void on_cqe(int32_t result, uint32_t flags) override;

private:
	void io_done(int64_t result) override;
	void arm();

	uring_engine &engine_;
	unique_fd efd_;
	uint64_t count_ = 0; // the kernel writes here while the read is armed
	io_completion *done_ = nullptr;
	bool armed_ = false;
	bool waiting_for_sqe_ = false;
};

} // namespace tcmud
