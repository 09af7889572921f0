// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A RAM backstore for the SCSI tests, as a backstore_queue.
//
// synchronous: every request is carried out and completed inside submit().
// deferred:    requests queue up; the test completes them, in any order,
//              with complete(i), so it can stop a command between steps.
// Either way the test can make the next request of a kind fail (-EIO,
// -ENOSPC, ...) or complete short (move fewer bytes than asked).
// Thread-safe, so two threads can share one store; every request is logged.
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "tcmud/backstore.h"

namespace tcmud::scsi::test {

class ram_backstore final : public backstore_queue {
public:
	enum class mode { synchronous, deferred };

	struct record {
		block_op op;
		uint64_t offset;
		uint64_t length;
		bool fua;
		const block_io *io;  // which request (identifies its command)
		bool atomic = false;
	};

	ram_backstore(uint64_t bytes, mode m = mode::synchronous);

	void submit(block_io &io) override;
	// Deallocated: 512-byte units last discarded and not written since.
	int allocation(uint64_t offset, uint64_t length, allocation_run *out) override;

	void set_mode(mode m) { mode_ = m; }
	// synchronous mode: yield the CPU before each request, so that two
	// threads sharing the store interleave their requests more often.
	void set_yield(bool on) { yield_ = on; }
	// The next request of `op` completes with `result`: < 0 moves nothing;
	// 0 < result < length moves only `result` bytes (a short completion).
	void inject(block_op op, int64_t result);

	// deferred mode
	std::size_t queued() const;
	const block_io &queued_at(std::size_t i) const;
	void complete(std::size_t i);  // carries out and completes request i
	void complete_all();           // in submission order, until none is left
	// Carries out the first `bytes` of queued write i, leaving it queued:
	// a write seen half done, as a buffered file shows one mid-copy.
	void complete_part(std::size_t i, uint64_t bytes);
	// synchronous mode: writes are copied one 512-byte unit at a time, the
	// store unlocked between units, as a page cache copy runs; after the
	// first unit the write waits (up to 1 ms) for another thread's read.
	void set_piecewise_writes(bool on) { piecewise_ = on; }

	std::vector<uint8_t> &bytes() { return bytes_; }
	std::vector<record> history() const;
	std::size_t count(block_op op) const;

private:
	int64_t perform(block_io &io);
	int64_t compare_and_write(block_io &io);
	void perform_piecewise(block_io &io);
	void copy_part(const block_io &io, uint64_t from, uint64_t n);

	mutable std::mutex mutex_;
	std::vector<uint8_t> bytes_;
	std::vector<bool> deallocated_;  // per 512-byte unit
	mode mode_;
	bool yield_ = false;
	bool piecewise_ = false;
	std::atomic<uint64_t> reads_done_{0};
	std::deque<block_io *> queue_;
	std::vector<std::pair<block_op, int64_t>> injected_;
	std::vector<record> history_;
};

} // namespace tcmud::scsi::test
