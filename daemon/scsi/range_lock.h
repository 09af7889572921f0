// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The LBA range lock that makes COMPARE AND WRITE atomic with respect to every
// other write of a logical unit, across all queue threads.
//
// Writers (WRITE, WRITE SAME, UNMAP, ...) take a range shared; COMPARE AND
// WRITE takes it exclusive. Nothing ever blocks a thread: an entry that cannot
// be granted now is parked, and its `granted` callback runs later (from
// whichever thread released the conflicting range) so its owner can resume it
// on its own queue thread.
//
// The fast path. While no exclusive entry exists, a shared lock is one atomic
// increment of a per-thread counter (a cache line of its own among STRIPES)
// and one load of `exclusive_users_`, a line that is only written when a
// COMPARE AND WRITE starts or ends. Fast holders are not listed, so their
// ranges are unknown; an exclusive entry is therefore granted only once every
// stripe has drained to zero. Writers that start after `exclusive_users_`
// became non-zero see it (Dekker-style: both sides do a seq_cst store then a
// seq_cst load of the other's variable) and take the slow path: they are
// listed under `mutex_` with their range, and wait only if they overlap an
// exclusive entry. Fast writers that were already in flight finish in bounded
// time, and whichever of them brings a stripe to zero while an exclusive
// entry exists re-runs the grant under the mutex, so no wake-up is lost.
//
// Ordering among slow entries is first come, first served for overlapping
// ranges: a waiter is not granted while an earlier conflicting waiter exists,
// so a stream of writes cannot starve a COMPARE AND WRITE or the reverse.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace tcmud::scsi {

class range_lock {
public:
	// One per command slot, embedded in it: the lock never allocates.
	struct entry {
		enum class state : uint8_t { idle, fast, waiting, held };

		// Called, without the lock's mutex held, from the thread that
		// made this entry grantable. Not called when the lock call
		// itself returned true.
		void (*granted)(entry &) = nullptr;
		void *context = nullptr;

		uint64_t first = 0;  // first LBA
		uint64_t end = 0;    // one past the last LBA
		bool exclusive = false;
		state current = state::idle;
		uint8_t stripe = 0;
		entry *prev = nullptr;
		entry *next = nullptr;
		entry *wake_next = nullptr;
	};

	range_lock() = default;
	range_lock(const range_lock &) = delete;
	range_lock &operator=(const range_lock &) = delete;

	// Return true if granted now; false if parked (granted() follows).
	bool lock_shared(entry &e, uint64_t first, uint64_t count);
	bool lock_exclusive(entry &e, uint64_t first, uint64_t count);
	// Releases a granted entry (fast or held).
	void unlock(entry &e);

	// For tests and statistics: exclusive entries waiting or held.
	uint32_t exclusive_users() const { return exclusive_users_.load(); }

	static constexpr std::size_t STRIPES = 16;

private:
	struct list {
		entry *head = nullptr;
		entry *tail = nullptr;
		void push_back(entry &e);
		void remove(entry &e);
	};
	struct alignas(64) stripe_counter {
		std::atomic<uint64_t> in_flight{0};
	};

	bool lock_slow(entry &e);
	bool can_grant(const entry &e) const;
	bool fast_drained() const;
	entry *grant_waiters(entry *self);
	static void wake_all(entry *chain);

	std::array<stripe_counter, STRIPES> fast_{};
	alignas(64) std::atomic<uint32_t> exclusive_users_{0};
	alignas(64) std::mutex mutex_;
	list holders_;  // slow shared and exclusive entries that are held
	list waiters_;  // in arrival order
};

} // namespace tcmud::scsi
