// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A queue's io_uring, as a backstore sees it. The queue worker owns the ring
// (one per queue thread, IORING_SETUP_SINGLE_ISSUER where available); a
// backstore only borrows submission entries from it, so every I/O of a queue
// — backing-file reads and writes and the uio doorbell alike — is submitted
// and reaped by one io_uring_enter() loop with no locks.
#include <liburing.h>

#include "tcmud/io_completion.h"

namespace tcmud {

class io_engine {
public:
	// Returns a cleared SQE whose user_data is already set to `done`, or
	// nullptr if the submission queue is full even after flushing it.
	virtual io_uring_sqe *get_sqe(io_completion *done) = 0;

protected:
	~io_engine() = default;
};

} // namespace tcmud
