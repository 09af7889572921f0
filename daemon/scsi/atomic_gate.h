// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Keeps READs from seeing part of a WRITE ATOMIC (SBC-4: no read returns a
// mix of old and new data of an atomic write), without making every READ
// take the range lock.
//
// One word: the count of atomic writes ever started (high bits) and of those
// in flight (low bits). A WRITE ATOMIC adds one to both before it takes its
// range exclusively and writes, and takes one off the in-flight count after
// its write completed. A READ loads the word before it submits (read_begin):
// if an atomic write is in flight it takes the range lock shared instead,
// which parks it behind an overlapping exclusive holder. Otherwise it reads
// at once and, when the read has completed, loads the word again
// (read_valid): if any atomic write started meanwhile, its data may be in
// the buffer half done, and the READ is done again under the lock. Every
// atomic write in flight at some instant between the two loads either was in
// flight at the first (seen) or started after it (the started count moved),
// so no overlap is missed.
//
// The hot path, while no atomic write runs: two loads of a cache line that
// is written only when an atomic write starts or ends. No store, no
// read-modify-write, no lock.
//
// Ordering: write_begin() is a read-modify-write followed by a full fence,
// so the new count is visible before any byte of the atomic write (whose
// data store happens in the kernel, after a syscall that is not a barrier
// on every architecture). read_begin() is an acquire load sequenced before
// the read's submission. read_valid() runs after the read's completion was
// taken from the ring with an acquire load (liburing's CQ head/tail), which
// the kernel published with a release after copying the data, so the
// second load cannot be satisfied before the data was read.
#include <atomic>
#include <cstdint>

#if defined(__SANITIZE_THREAD__)
#define TCMUD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TCMUD_TSAN 1
#endif
#endif
#ifndef TCMUD_TSAN
#define TCMUD_TSAN 0
#endif

namespace tcmud::scsi {

class atomic_gate {
public:
	// True if no atomic write is in flight; *ticket is for read_valid().
	bool read_begin(uint64_t *ticket) const
	{
		uint64_t v = state_.load(std::memory_order_acquire);
		*ticket = v >> ACTIVE_BITS;
		return (v & ACTIVE_MASK) == 0;
	}
	// True if no atomic write started since read_begin() gave `ticket`.
	bool read_valid(uint64_t ticket) const
	{
		return (state_.load(std::memory_order_acquire) >> ACTIVE_BITS) == ticket;
	}

	void write_begin()
	{
		state_.fetch_add(STARTED_ONE + 1, std::memory_order_seq_cst);
#if !TCMUD_TSAN
		// TSan does not model fences (gcc refuses to build one); on x86
		// the locked read-modify-write above is a full barrier anyway.
		std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
	}
	void write_end() { state_.fetch_sub(1, std::memory_order_release); }

	// For tests: atomic writes in flight.
	uint64_t in_flight() const { return state_.load() & ACTIVE_MASK; }

private:
	// Command slots of all queues together stay far below 2^24.
	static constexpr unsigned ACTIVE_BITS = 24;
	static constexpr uint64_t ACTIVE_MASK = (uint64_t{1} << ACTIVE_BITS) - 1;
	static constexpr uint64_t STARTED_ONE = uint64_t{1} << ACTIVE_BITS;

	alignas(64) std::atomic<uint64_t> state_{0};
};

} // namespace tcmud::scsi
