// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Ring resets that tcmud starts, done only once no I/O of ours can still
// touch the data area.
//
// A reset (block_dev, reset_ring, unblock_dev) fails every command the
// kernel has queued and frees their data blocks for new commands; on the
// multi-queue kernel it does so on every ring of the device. Backing I/O
// still running for a failed command would then read from or write into
// data blocks that now belong to new commands: a late READ lands in a new
// WRITE's data, which then goes to disk and is answered GOOD. So a reset
// waits until every queue of the device has stopped fetching and has
// nothing in flight; the last queue to get there performs it on its thread
// and wakes the others.
//
// One barrier per device, shared by its queue workers; each worker joins
// once its loop runs and leaves when the loop ends. All calls are cheap
// and rare except pending(), which a worker reads before each fetch.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

namespace tcmud {

class reset_barrier {
public:
	// reset: the device's block_dev, reset_ring (BUSY), unblock_dev; 0 or
	// -errno. Empty: the device cannot be reset (every wait ends in
	// -EOPNOTSUPP).
	explicit reset_barrier(std::function<int()> reset);

	// A worker's loop runs; poke wakes that loop from any thread. Returns
	// the member's id for the calls below.
	size_t join(std::function<void()> poke);
	// The loop has ended: the barrier no longer waits for it.
	void leave(size_t id);

	// Some queue needs a reset: every member stops fetching until it is
	// done. Pokes the other members.
	void request();
	// Whether a reset is asked for and not yet done (any thread).
	bool pending() const { return pending_.load(std::memory_order_acquire); }
	// Member id has stopped fetching and has nothing in flight. nullopt
	// while others still have commands in flight; once the reset is done
	// (by this call if this member was the last to arrive), its result,
	// given once to each member that arrived for it.
	std::optional<int> arrive(size_t id);

private:
	struct member {
		std::function<void()> poke;
		bool active = false;
		bool arrived = false;
		uint64_t ticket = 0; // epoch_ when it arrived
	};
	void poke_others(size_t id, std::unique_lock<std::mutex> &held);

	std::function<int()> reset_;
	mutable std::mutex mutex_;
	std::vector<member> members_;
	std::atomic<bool> pending_{false};
	uint64_t epoch_ = 0; // resets done
	int result_ = 0;     // the last one's
};

} // namespace tcmud
