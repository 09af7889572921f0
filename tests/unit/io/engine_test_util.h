// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Helpers shared by the io engine tests.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "tcmud/io_completion.h"

namespace tcmud::test {

// Records every result it is given, so a test can see both how often and
// with what it was called.
struct recording_completion final : io_completion {
	std::vector<int64_t> results;
	void io_done(int64_t result) override { results.push_back(result); }
	size_t calls() const { return results.size(); }
};

// While it lives, this process can open no new fd (EMFILE): the soft
// RLIMIT_NOFILE is lowered to the lowest free fd. For the set-up errors of
// things that create one.
class no_free_fds {
public:
	no_free_fds()
	{
		getrlimit(RLIMIT_NOFILE, &saved_);
		int lowest = dup(0);
		close(lowest);
		rlimit none = saved_;
		none.rlim_cur = rlim_t(lowest);
		ok_ = lowest >= 0 && setrlimit(RLIMIT_NOFILE, &none) == 0;
	}
	~no_free_fds() { setrlimit(RLIMIT_NOFILE, &saved_); }
	no_free_fds(const no_free_fds &) = delete;
	no_free_fds &operator=(const no_free_fds &) = delete;
	bool ok() const { return ok_; }

private:
	rlimit saved_{};
	bool ok_ = false;
};

} // namespace tcmud::test
