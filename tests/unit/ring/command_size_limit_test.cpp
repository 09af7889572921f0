// SPDX-License-Identifier: GPL-2.0-or-later
// max_command_data_bytes against the two checks target_core_user makes in
// queue_cmd_ring: data (whole blocks) <= the data area, and the entry
// (header + one iovec per block + CDB) <= half the command ring.
#include <catch2/catch.hpp>

#include "ring/command_size_limit.h"

using namespace tcmud;

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;
constexpr uint32_t DEFAULT_RING = 8 * MiB - 128;  // CMDR_SIZE_DEF

} // namespace

TEST_CASE("command size: the stock default, 1 GiB of data and an 8 MiB ring", "[ring]")
{
	// Half the ring, less header and CDB, in 16-byte iovecs of one block
	// each: the ring, not the data area, is the bound here (~1023.9 MiB).
	uint64_t iovs = ((8 * MiB - 128) / 2 - 48 - 264) / 16;
	CHECK(max_command_data_bytes({1024 * MiB, 4096, DEFAULT_RING}) == iovs * 4096);
	CHECK(iovs * 4096 < 1024 * MiB);
	CHECK(iovs * 4096 > 1023 * MiB);
}

TEST_CASE("command size: a per-queue data area bounds it", "[ring]")
{
	// max_data_area_mb=1 split over 4 queues: 64 blocks of 4 KiB each.
	CHECK(max_command_data_bytes({256 * KiB, 4096, 2 * MiB - 128}) == 256 * KiB);
	// A tail shorter than a block is never usable.
	CHECK(max_command_data_bytes({256 * KiB + 4095, 4096, DEFAULT_RING}) == 256 * KiB);
	// data_pages_per_blk=4: 16 KiB blocks.
	CHECK(max_command_data_bytes({1 * MiB + 8 * KiB, 16384, DEFAULT_RING}) == 1 * MiB);
}

TEST_CASE("command size: a small command ring bounds the iovec count", "[ring]")
{
	// 64 KiB ring: half is 32768 bytes, minus 48 + 264 for header and CDB,
	// leaves 2028 iovecs of 16 bytes: 2028 blocks.
	CHECK(max_command_data_bytes({1024 * MiB, 4096, 64 * KiB}) == 2028 * 4096);
	CHECK(max_command_data_bytes({1024 * MiB, 4096, 256}) == 0);
	CHECK(max_command_data_bytes({4095, 4096, DEFAULT_RING}) == 0);
	CHECK(max_command_data_bytes({1 * MiB, 0, DEFAULT_RING}) == 0);
}
