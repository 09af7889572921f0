// SPDX-License-Identifier: GPL-2.0-or-later
// VERIFY (10/16) with BYTCHK 00b/01b/11b, and WRITE AND VERIFY (10/16).
#include <catch2/catch.hpp>

#include <cerrno>

#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::block_op;

namespace {


} // namespace

TEST_CASE("VERIFY without BYTCHK reads the medium and is GOOD", "[verify]")
{
	lu_fixture f;
	require_good(f.run(cdb10(VERIFY_10, 4, 3)));
	CHECK(f.store.count(block_op::read) == 1);
}

TEST_CASE("VERIFY without BYTCHK reports an unreadable block as a medium error", "[verify]")
{
	lu_fixture f;
	f.store.inject(block_op::read, -EIO);
	auto r = f.run(cdb10(VERIFY_10, 4, 3));
	require_sense(r, MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	CHECK(r.sense.information == 4u);
}

TEST_CASE("VERIFY with BYTCHK 01b matching the medium is GOOD", "[verify]")
{
	lu_fixture f;
	auto data = pattern(3 * 512, 40);
	std::copy(data.begin(), data.end(), f.block(4, 3).begin());
	require_good(f.run(cdb10(VERIFY_10, 4, 3, BYTCHK_DATA), data, 0, 200));
}

TEST_CASE("VERIFY with BYTCHK 01b reports a MISCOMPARE at the first differing byte", "[verify]")
{
	lu_fixture f;
	auto data = pattern(3 * 512, 40);
	std::copy(data.begin(), data.end(), f.block(4, 3).begin());
	f.block(4, 3)[1029] ^= 0xff;
	auto r = f.run(cdb10(VERIFY_10, 4, 3, BYTCHK_DATA), data);
	require_sense(r, MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	CHECK(r.sense.information == 1029u);
}

TEST_CASE("VERIFY(16) finds a miscompare in a later chunk of a long range", "[verify]")
{
	lu_fixture f;
	auto data = pattern(600 * 512, 41);
	std::copy(data.begin(), data.end(), f.block(10, 600).begin());
	f.block(10, 600)[500 * 512 + 3] ^= 1;
	auto r = f.run(cdb16(VERIFY_16, 10, 600, BYTCHK_DATA), data);
	require_sense(r, MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	CHECK(r.sense.information == 500u * 512 + 3);
	CHECK(f.store.count(block_op::read) >= 2);
}

TEST_CASE("VERIFY with BYTCHK 11b compares every block with the one sent", "[verify]")
{
	lu_fixture f;
	auto one = pattern(512, 50);
	for (uint64_t lba = 20; lba < 25; lba++)
		std::copy(one.begin(), one.end(), f.block(lba).begin());
	require_good(f.run(cdb10(VERIFY_10, 20, 5, BYTCHK_ONE_BLOCK), one));
	f.block(23)[17] ^= 0x10;
	auto r = f.run(cdb10(VERIFY_10, 20, 5, BYTCHK_ONE_BLOCK), one);
	require_sense(r, MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	CHECK(r.sense.information == 17u);
}

TEST_CASE("VERIFY with the reserved BYTCHK 10b is an invalid field", "[verify]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(cdb10(VERIFY_10, 0, 1, 0x04), std::vector<uint8_t>(512)), 1, 2);
}

TEST_CASE("VERIFY with BYTCHK and too little data is refused", "[verify]")
{
	lu_fixture f;
	auto r = f.run(cdb10(VERIFY_10, 0, 2, BYTCHK_DATA), std::vector<uint8_t>(512));
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
}

TEST_CASE("VERIFY past the end is LBA OUT OF RANGE", "[verify]")
{
	lu_fixture f;
	require_sense(f.run(cdb16(VERIFY_16, 1024, 1)), ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
}

TEST_CASE("WRITE AND VERIFY writes with FUA and reads the blocks back", "[verify]")
{
	lu_fixture f;
	auto data = pattern(2 * 512, 60);
	require_good(f.run(cdb10(WRITE_VERIFY_10, 30, 2, BYTCHK_DATA), data));
	CHECK(std::equal(data.begin(), data.end(), f.block(30, 2).begin()));
	auto h = f.store.history();
	REQUIRE(h.size() == 2);
	CHECK(h[0].op == block_op::write);
	CHECK(h[0].fua);
	CHECK(h[1].op == block_op::read);
	CHECK(h[1].offset == 30 * 512);
}

TEST_CASE("WRITE AND VERIFY reports a MISCOMPARE when the medium changed under it", "[verify]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	data_buffer buf(pattern(2 * 512, 61));
	auto cdb = cdb16(WRITE_VERIFY_16, 30, 2, BYTCHK_DATA);
	command cmd;
	cmd.reset(cdb, buf.iovs, &f.owner);
	f.lu->execute(cmd, f.store);
	f.store.complete(0);  // the write
	REQUIRE(f.store.queued() == 1);
	f.block(31)[9] ^= 0x80;  // the medium went bad after the write
	f.store.complete(0);  // the read-back
	REQUIRE(f.owner.done == 1);
	auto s = decode_sense(cmd.sense());
	CHECK(s.key == MISCOMPARE);
	CHECK(s.information == 512u + 9);
}

TEST_CASE("WRITE AND VERIFY with a failing write is MEDIUM ERROR, WRITE ERROR", "[verify]")
{
	lu_fixture f;
	f.store.inject(block_op::write, -EIO);
	require_sense(f.run(cdb10(WRITE_VERIFY_10, 0, 1), std::vector<uint8_t>(512)), MEDIUM_ERROR,
		      ASC_WRITE_ERROR);
}

TEST_CASE("WRITE AND VERIFY with BYTCHK 11b is an invalid field", "[verify]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(cdb10(WRITE_VERIFY_10, 0, 1, BYTCHK_ONE_BLOCK), std::vector<uint8_t>(512)), 1, 2);
}
