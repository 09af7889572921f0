// SPDX-License-Identifier: GPL-2.0-or-later
// WRITE SAME (10/16) with UNMAP and NDOB, and UNMAP's parameter list.
#include <catch2/catch.hpp>

#include <cerrno>

#include "byte_order.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::block_op;

namespace {

constexpr uint8_t WS_UNMAP = 0x08;
constexpr uint8_t WS_NDOB = 0x01;

bool all_equal(std::span<const uint8_t> s, uint8_t v)
{
	return std::all_of(s.begin(), s.end(), [&](uint8_t b) { return b == v; });
}

struct descriptor {
	uint64_t lba;
	uint32_t blocks;
};

std::vector<uint8_t> unmap_list(std::initializer_list<descriptor> ds)
{
	std::vector<uint8_t> l(8 + 16 * ds.size());
	put_be16(l, 0, l.size() - 2);
	put_be16(l, 2, 16 * ds.size());
	std::size_t at = 8;
	for (const descriptor &d : ds) {
		put_be64(l, at, d.lba);
		put_be32(l, at + 8, d.blocks);
		at += 16;
	}
	return l;
}

std::vector<uint8_t> unmap_cdb(std::size_t length)
{
	return cdb10(UNMAP, 0, static_cast<uint16_t>(length));
}

} // namespace

TEST_CASE("WRITE SAME(10) writes the block to every LBA, in chunks", "[write_same]")
{
	lu_fixture f;
	auto one = pattern(512, 70);
	require_good(f.run(cdb10(WRITE_SAME_10, 100, 300), one));
	for (uint64_t lba = 100; lba < 400; lba++)
		REQUIRE(std::equal(one.begin(), one.end(), f.block(lba).begin()));
	CHECK(f.block(400)[0] == 0);
	CHECK(f.store.count(block_op::write) == 2);
}

TEST_CASE("WRITE SAME(16) with UNMAP and zero data discards when LBPRZ holds", "[write_same]")
{
	lu_fixture f;
	f.fill_block(10, 0x33, 8);
	require_good(f.run(cdb16(WRITE_SAME_16, 10, 8, WS_UNMAP), std::vector<uint8_t>(512)));
	auto h = f.store.history();
	REQUIRE(h.size() == 1);
	CHECK(h[0].op == block_op::discard);
	CHECK(h[0].length == 8 * 512);
	CHECK(all_equal(f.block(10, 8), 0));
}

TEST_CASE("WRITE SAME with UNMAP but non-zero data writes the data", "[write_same]")
{
	lu_fixture f;
	require_good(f.run(cdb16(WRITE_SAME_16, 10, 4, WS_UNMAP), std::vector<uint8_t>(512, 0x44)));
	CHECK(f.store.count(block_op::discard) == 0);
	CHECK(all_equal(f.block(10, 4), 0x44));
}

TEST_CASE("WRITE SAME with UNMAP uses write_zeroes when discards do not read zero", "[write_same]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps.discard_zeroes = false; });
	f.fill_block(10, 0x33, 2);
	require_good(f.run(cdb10(WRITE_SAME_10, 10, 2, WS_UNMAP), std::vector<uint8_t>(512)));
	CHECK(f.store.count(block_op::discard) == 0);
	CHECK(f.store.count(block_op::write_zeroes) == 1);
	CHECK(all_equal(f.block(10, 2), 0));
}

TEST_CASE("WRITE SAME of zeroes without write_zeroes support writes zero blocks", "[write_same]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps = {}; });
	f.fill_block(10, 0x33, 2);
	require_good(f.run(cdb10(WRITE_SAME_10, 10, 2, WS_UNMAP), std::vector<uint8_t>(512)));
	CHECK(f.store.count(block_op::write) == 1);
	CHECK(all_equal(f.block(10, 2), 0));
}

TEST_CASE("WRITE SAME(16) NDOB zeroes the range without a data buffer", "[write_same]")
{
	lu_fixture f;
	f.fill_block(50, 0x77, 3);
	require_good(f.run(cdb16(WRITE_SAME_16, 50, 3, WS_NDOB)));
	CHECK(all_equal(f.block(50, 3), 0));
	CHECK(f.store.count(block_op::write_zeroes) == 1);
}

TEST_CASE("WRITE SAME without NDOB needs a block of data", "[write_same]")
{
	lu_fixture f;
	require_sense(f.run(cdb16(WRITE_SAME_16, 50, 3)), ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(f.store.history().empty());
}

TEST_CASE("WRITE SAME of zero blocks is an invalid field (WSNZ)", "[write_same]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(cdb10(WRITE_SAME_10, 0, 0), std::vector<uint8_t>(512)), 7);
}

TEST_CASE("WRITE SAME above MAXIMUM WRITE SAME LENGTH is an invalid field", "[write_same]")
{
	lu_fixture f([](logical_unit_config &c) { c.max_write_same_blocks = 16; });
	require_invalid_cdb(f.run(cdb16(WRITE_SAME_16, 0, 17), std::vector<uint8_t>(512)), 10);
}

TEST_CASE("WRITE SAME with ANCHOR is an invalid field", "[write_same]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(cdb16(WRITE_SAME_16, 0, 1, 0x10), std::vector<uint8_t>(512)), 1, 4);
}

TEST_CASE("WRITE SAME past the end is LBA OUT OF RANGE", "[write_same]")
{
	lu_fixture f;
	auto r = f.run(cdb10(WRITE_SAME_10, 1000, 30), std::vector<uint8_t>(512, 1));
	require_sense(r, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	CHECK(r.sense.information == 1000u);
}

TEST_CASE("WRITE SAME reports the failing chunk's LBA on EIO", "[write_same]")
{
	lu_fixture f;
	f.store.inject(block_op::write, -EIO);
	auto r = f.run(cdb10(WRITE_SAME_10, 100, 8), std::vector<uint8_t>(512, 1));
	require_sense(r, MEDIUM_ERROR, ASC_WRITE_ERROR);
	CHECK(r.sense.information == 100u);
}

TEST_CASE("UNMAP discards each descriptor's blocks", "[unmap]")
{
	lu_fixture f;
	f.fill_block(0, 0x11, 64);
	auto list = unmap_list({{4, 4}, {20, 0}, {32, 8}});
	require_good(f.run(unmap_cdb(list.size()), list, 0, 7));
	auto h = f.store.history();
	REQUIRE(h.size() == 2);
	CHECK(h[0].op == block_op::discard);
	CHECK(h[0].offset == 4 * 512);
	CHECK(h[1].offset == 32 * 512);
	CHECK(h[1].length == 8 * 512);
	CHECK(all_equal(f.block(4, 4), 0));
	CHECK(all_equal(f.block(8, 24), 0x11));
}

TEST_CASE("UNMAP with a zero-length parameter list is GOOD and does nothing", "[unmap]")
{
	lu_fixture f;
	require_good(f.run(unmap_cdb(0)));
	CHECK(f.store.history().empty());
}

TEST_CASE("UNMAP with a list shorter than its header is PARAMETER LIST LENGTH ERROR", "[unmap]")
{
	lu_fixture f;
	require_sense(f.run(unmap_cdb(7), std::vector<uint8_t>(7)), ILLEGAL_REQUEST,
		      ASC_PARAMETER_LIST_LENGTH_ERROR);
}

TEST_CASE("UNMAP with one descriptor out of range discards nothing", "[unmap]")
{
	lu_fixture f;
	f.fill_block(0, 0x11, 8);
	auto list = unmap_list({{0, 8}, {1020, 8}});
	auto r = f.run(unmap_cdb(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	CHECK(r.sense.information == 1020u);
	CHECK(f.store.history().empty());
	CHECK(all_equal(f.block(0, 8), 0x11));
}

TEST_CASE("UNMAP of more than MAXIMUM UNMAP LBA COUNT points at the descriptor", "[unmap]")
{
	lu_fixture f([](logical_unit_config &c) { c.max_unmap_blocks = 10; });
	auto list = unmap_list({{0, 8}, {100, 3}});
	auto r = f.run(unmap_cdb(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK_FALSE(r.sense.c_d);
	CHECK(r.sense.field == 8 + 16 + 8);
	CHECK(f.store.history().empty());
}

TEST_CASE("UNMAP with more descriptors than allowed is an invalid field in the list", "[unmap]")
{
	lu_fixture f([](logical_unit_config &c) { c.max_unmap_descriptors = 1; });
	auto list = unmap_list({{0, 1}, {2, 1}});
	auto r = f.run(unmap_cdb(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK(r.sense.field == 2);
}

TEST_CASE("UNMAP ignores a partial last descriptor and a descriptor length past the list", "[unmap]")
{
	lu_fixture f;
	auto list = unmap_list({{4, 1}});
	put_be16(list, 2, 40);  // claims 2.5 descriptors; the list holds one
	require_good(f.run(unmap_cdb(list.size()), list));
	CHECK(f.store.count(block_op::discard) == 1);
}

TEST_CASE("UNMAP with ANCHOR is an invalid field", "[unmap]")
{
	lu_fixture f;
	auto list = unmap_list({{4, 1}});
	auto cdb = unmap_cdb(list.size());
	cdb[1] = 0x01;
	require_invalid_cdb(f.run(cdb, list), 1, 0);
}

TEST_CASE("UNMAP with less data than its list length is refused", "[unmap]")
{
	lu_fixture f;
	auto list = unmap_list({{4, 1}});
	require_sense(f.run(unmap_cdb(list.size() + 16), list), ILLEGAL_REQUEST,
		      ASC_INVALID_FIELD_IN_COMMAND_IU);
}

TEST_CASE("UNMAP with a failing discard is MEDIUM ERROR, WRITE ERROR at its LBA", "[unmap]")
{
	lu_fixture f;
	f.store.inject(block_op::discard, -EIO);
	auto list = unmap_list({{12, 2}});
	auto r = f.run(unmap_cdb(list.size()), list);
	require_sense(r, MEDIUM_ERROR, ASC_WRITE_ERROR);
	CHECK(r.sense.information == 12u);
}
