// SPDX-License-Identifier: GPL-2.0-or-later
// READ CAPACITY(10) and (16).
#include <catch2/catch.hpp>

#include "byte_order.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;

TEST_CASE("READ CAPACITY(10) returns the last LBA and the block length", "[capacity]")
{
	lu_fixture f;
	auto r = f.run({READ_CAPACITY_10, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {}, 8);
	require_good(r);
	REQUIRE(r.read_len == 8);
	CHECK(get_be32(r.data_in, 0) == lu_fixture::BLOCKS - 1);
	CHECK(get_be32(r.data_in, 4) == lu_fixture::BLOCK);
}

TEST_CASE("READ CAPACITY(10) says 0xffffffff when the last LBA needs 64 bits", "[capacity]")
{
	lu_fixture f([](logical_unit_config &c) { c.num_blocks = 1ull << 33; });
	auto r = f.run({READ_CAPACITY_10, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {}, 8);
	require_good(r);
	CHECK(get_be32(r.data_in, 0) == 0xffffffff);
}

TEST_CASE("READ CAPACITY(16) returns the 64-bit last LBA", "[capacity]")
{
	lu_fixture f([](logical_unit_config &c) { c.num_blocks = 1ull << 33; });
	auto r = f.run(read_capacity_16_cdb(), {}, 32);
	require_good(r);
	REQUIRE(r.read_len == 32);
	CHECK(get_be64(r.data_in, 0) == (1ull << 33) - 1);
	CHECK(get_be32(r.data_in, 8) == lu_fixture::BLOCK);
}

TEST_CASE("READ CAPACITY(16) sets LBPME and LBPRZ from the backstore caps", "[capacity]")
{
	lu_fixture f;
	auto r = f.run(read_capacity_16_cdb(), {}, 32);
	require_good(r);
	CHECK((r.data_in[14] & 0xc0) == 0xc0);
}

TEST_CASE("READ CAPACITY(16) sets LBPME without LBPRZ when discards do not zero", "[capacity]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps.discard_zeroes = false; });
	auto r = f.run(read_capacity_16_cdb(), {}, 32);
	require_good(r);
	CHECK((r.data_in[14] & 0xc0) == 0x80);
}

TEST_CASE("READ CAPACITY(16) clears LBPME when the backstore cannot discard", "[capacity]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps = {}; });
	auto r = f.run(read_capacity_16_cdb(), {}, 32);
	require_good(r);
	CHECK((r.data_in[14] & 0xc0) == 0);
}

TEST_CASE("READ CAPACITY(16) stops at its allocation length", "[capacity]")
{
	lu_fixture f;
	auto r = f.run(read_capacity_16_cdb(12), {}, 32);
	require_good(r);
	CHECK(r.read_len == 12);
}

TEST_CASE("after an online resize READ CAPACITY and the LBA checks use the new size", "[capacity][resize]")
{
	lu_fixture f;
	const uint64_t half = lu_fixture::BLOCKS / 2;
	f.lu->set_num_blocks(half);
	auto cap = f.run(read_capacity_16_cdb(), {}, 32);
	require_good(cap);
	CHECK(get_be64(cap.data_in, 0) == half - 1);

	auto cut_off = f.run(cdb10(READ_10, half, 1), {}, lu_fixture::BLOCK);
	require_sense(cut_off, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	require_good(f.run(cdb10(READ_10, half - 1, 1), {}, lu_fixture::BLOCK));

	f.lu->set_num_blocks(lu_fixture::BLOCKS);
	require_good(f.run(cdb10(READ_10, half, 1), {}, lu_fixture::BLOCK));
}
