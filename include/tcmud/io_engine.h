// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A queue's io_uring, as a backstore sees it. The queue worker owns the io_uring
// (one per queue thread, IORING_SETUP_SINGLE_ISSUER where available); a
// backstore only borrows submission entries from it, so every I/O of a queue
// — backing-file reads and writes and the uio doorbell alike — is submitted
// and reaped by one io_uring_enter() loop with no locks.
#include <liburing.h>

#include <cerrno>
#include <string>

#include "tcmud/io_completion.h"
#include "tcmud/setup_result.h"

namespace tcmud {

class io_engine {
public:
	// Returns a cleared SQE whose user_data is already set to `done`, or
	// nullptr if the submission queue is full even after flushing it.
	virtual io_uring_sqe *get_sqe(io_completion *done) = 0;

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

protected:
	~io_engine() = default;
};

} // namespace tcmud
