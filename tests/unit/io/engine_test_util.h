// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Helpers shared by the io engine tests.
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

} // namespace tcmud::test
