// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A RAM backstore whose I/O can be held in the kernel, for the queue-worker
// tests of ring resets and of a stop whose drain gives up (issue 14 F2, F3).
//
// While hold() is on, every request first waits on a real io_uring read of
// one byte from a pipe of its own: the I/O is truly in flight in the
// worker's ring, and nothing the worker does finishes it early. release(i)
// lets held request i (in the order they were held) go on: it is carried
// out on the RAM image, or fails with `result` if that is negative, and
// completes on the worker's thread, as a real backstore's would.
// Otherwise requests complete through a NOP. For each held request the
// store remembers the buffers it was given (what a stuck kernel I/O would
// still read from or write into later).
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "tcmud/backstore.h"
#include "tcmud/unique_fd.h"

namespace tcmud::test {

class held_backstore final : public backstore {
public:
	explicit held_backstore(uint64_t bytes);

	uint64_t size_bytes() const override { return bytes_.size(); }
	backstore_caps caps() const override { return {}; }
	setup_result<std::unique_ptr<backstore_queue>> open_queue(io_engine &engine) override;

	void hold(bool on) { hold_.store(on); }
	// Requests waiting on the pipe now.
	size_t held() const { return held_.load(); }
	void release(size_t index, int64_t result = 0);
	// The iovecs of every request that was held, in order.
	std::vector<std::vector<iovec>> held_buffers() const;

	std::vector<uint8_t> &bytes() { return bytes_; }

private:
	class queue;
	friend class queue;

	struct gate {
		unique_fd read_end;
		unique_fd write_end;
		std::atomic<int64_t> result{0};
	};

	std::vector<uint8_t> bytes_;
	std::vector<std::unique_ptr<gate>> gates_; // under mutex_
	std::atomic<bool> hold_{false};
	std::atomic<size_t> held_{0};
	mutable std::mutex mutex_;
	std::vector<std::vector<iovec>> held_buffers_;
};

} // namespace tcmud::test
