// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The one callback shape used on the data path: an object that is told how an
// asynchronous operation ended. Objects live in per-queue slot tables, so no
// allocation happens per I/O and the pointer itself is the io_uring user_data.
#include <cstdint>

namespace tcmud {

class io_completion {
public:
	// result: >= 0 on success (bytes moved, where that means something),
	// -errno on failure. Called exactly once per submitted operation, on the
	// thread that owns the queue.
	virtual void io_done(int64_t result) = 0;

protected:
	~io_completion() = default;
};

} // namespace tcmud
