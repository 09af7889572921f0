// SPDX-License-Identifier: GPL-2.0-or-later
// iov_total(): the data length of every command (scsi::command::reset), with
// an inline path for the usual single vector and the summing loop for the
// rest; both must agree, and the sum saturates rather than wrapping.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "iovec_buffer.h"

using tcmud::scsi::iov_total;

namespace {

iovec vec(uint64_t len)
{
	return iovec{nullptr, len};
}

} // namespace

TEST_CASE("iov_total sums one, several and no vectors", "[scsi][iovec]")
{
	CHECK(iov_total({}) == 0);
	std::vector<iovec> one{vec(4096)};
	CHECK(iov_total(one) == 4096);
	std::vector<iovec> three{vec(4096), vec(512), vec(65536)};
	CHECK(iov_total(three) == 4096 + 512 + 65536);
	// A single vector through the loop (a sub-span of a longer list).
	CHECK(iov_total(std::span(three).subspan(2, 1)) == 65536);
}

TEST_CASE("iov_total saturates instead of wrapping", "[scsi][iovec]")
{
	std::vector<iovec> huge{vec(UINT64_MAX - 10), vec(100)};
	CHECK(iov_total(huge) == UINT64_MAX);
	std::vector<iovec> one_huge{vec(UINT64_MAX)};
	CHECK(iov_total(one_huge) == UINT64_MAX);
}
