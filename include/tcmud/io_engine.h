// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A queue's io_uring, as a backstore sees it. The queue worker owns the io_uring
// (one per queue thread, IORING_SETUP_SINGLE_ISSUER where available); a
// backstore only borrows submission entries from it, so every I/O of a queue
// — backing-file reads and writes and the uio doorbell alike — is submitted
// and reaped by one io_uring_enter() loop with no locks.
#include <liburing.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tcmud/io_completion.h"
#include "tcmud/setup_result.h"

namespace tcmud {

// Memory this io_uring has registered as fixed buffers (the queue's TCMU
// data area, where the kernel promises its pages never change): buffer i
// covers [base + (i << fixed_buffer_shift), base + size), at most
// 1 << fixed_buffer_shift bytes (the kernel's limit on one registered
// buffer is 1 GiB). size 0: nothing registered.
inline constexpr unsigned fixed_buffer_shift = 30;

struct fixed_buffer_area {
	uintptr_t base = 0;
	size_t size = 0;
};

// The part of [start, start + len) that one fixed buffer can carry: 0 if
// the range is not wholly inside the area, else the bytes from start to
// the range's end or to the end of the 1 GiB buffer it starts in,
// whichever comes first, with that buffer's index in *index.
inline uint64_t fixed_buffer_slice(const fixed_buffer_area &area, uintptr_t start,
				   uint64_t len, int *index)
{
	// Unsigned: a start below the area wraps to a huge offset.
	const uintptr_t rel = start - area.base;
	if (rel >= area.size || len > area.size - rel)
		return 0;
	const uint64_t buffer = rel >> fixed_buffer_shift;
	const uint64_t to_end = ((buffer + 1) << fixed_buffer_shift) - rel;
	*index = static_cast<int>(buffer);
	return len < to_end ? len : to_end;
}

class io_engine {
public:
	// Returns a cleared SQE whose user_data is already set to `done`, or
	// nullptr if the submission queue is full even after flushing it.
	virtual io_uring_sqe *get_sqe(io_completion *done) = 0;
	// As get_sqe(), but the SQE is not cleared: only for a caller that
	// fills it with one of liburing's prep helpers built on
	// io_uring_prep_rw() (read, write, readv, writev, read_fixed,
	// write_fixed), which sets every field but user_data. Saves clearing
	// 64 bytes that are written again at once.
	//
	// Inline over the engine's SQ where it offers one (direct_sq_): the
	// read/write of every command takes an SQE here, and a virtual call
	// plus liburing's checks of setup flags that cannot change cost ~25
	// instructions a command more (docs/benchmarks.md). A full SQ, or an
	// engine without direct_sq_, takes the virtual path.
	io_uring_sqe *get_sqe_uncleared(io_completion *done)
	{
		if (io_uring_sq *sq = direct_sq_) [[likely]] {
			if (io_uring_sqe *sqe = claim_sqe(*sq)) [[likely]] {
				sqe->user_data = reinterpret_cast<uintptr_t>(done);
				++*direct_in_flight_;
				return sqe;
			}
		}
		return get_sqe_uncleared_slow(done);
	}

	// For a caller that got nullptr from get_sqe() and must not drop its
	// work: the engine calls waiter->io_done(0) once, on this queue's
	// thread, after its next round of submitting and reaping, when entries
	// may be free again. The caller then retries get_sqe().
	virtual void wait_for_sqe(io_completion *waiter) = 0;

	// Registers fd as a fixed file (use with IOSQE_FIXED_FILE), which saves
	// a file-table lookup per I/O. Set-up (a queue's open): the index, or
	// why not; the caller then simply keeps using the plain fd.
	virtual setup_result<int> register_file(int fd)
	{
		return setup_error{EOPNOTSUPP, "this engine cannot register fd " +
						       std::to_string(fd) + " as a fixed file"};
	}
	virtual void unregister_file(int index) { (void)index; }

	// The registered fixed buffers (see fixed_buffer_area), for
	// IORING_OP_READ_FIXED/WRITE_FIXED with buf_index; they stay
	// registered as long as the engine lives unless its owner unregisters
	// them after every queue using them is closed. Read once when a
	// backstore queue opens.
	virtual fixed_buffer_area fixed_buffers() const { return {}; }

protected:
	~io_engine() = default;

	// get_sqe_uncleared() when the inline path cannot serve: no direct_sq_,
	// or the SQ is full (flush it and try again, as get_sqe() does).
	virtual io_uring_sqe *get_sqe_uncleared_slow(io_completion *done) { return get_sqe(done); }

	// The next free SQE of an SQ filled in place (direct_sq_), or nullptr
	// if it is full: liburing's io_uring_get_sqe() for 64-byte SQEs
	// without SQPOLL, the one place an engine claims an SQE slot.
	static io_uring_sqe *claim_sqe(io_uring_sq &sq)
	{
		const unsigned tail = sq.sqe_tail;
		// Not SQPOLL (direct_sq_ says so): the kernel moves khead only
		// inside our own io_uring_enter(), as liburing assumes.
		const unsigned head = __atomic_load_n(sq.khead, __ATOMIC_RELAXED);
		if (tail - head >= sq.ring_entries)
			return nullptr;
		sq.sqe_tail = tail + 1;
		return &sq.sqes[tail & sq.ring_mask];
	}

	// Set by an engine whose SQ may be filled in place: 64-byte SQEs, no
	// SQPOLL, SQEs handed out on the owning thread only. Every SQE taken
	// there adds one to *direct_in_flight_, the engine's own count.
	io_uring_sq *direct_sq_ = nullptr;
	unsigned *direct_in_flight_ = nullptr;
};

} // namespace tcmud
