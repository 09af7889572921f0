// SPDX-License-Identifier: GPL-2.0-or-later
// The SBC-4 commands added for a complete direct-access disk: VERIFY(12),
// WRITE AND VERIFY(12), PREVENT ALLOW MEDIUM REMOVAL, READ DEFECT DATA
// 10/12, PRE-FETCH 10/16, GET LBA STATUS and ORWRITE(16), one test per CDB
// field.
#include <catch2/catch.hpp>

#include <cerrno>

#include "byte_order.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::block_op;

namespace {


std::vector<uint8_t> get_lba_status_cdb(uint64_t lba, uint32_t allocation)
{
	std::vector<uint8_t> c(16, 0);
	c[0] = SERVICE_ACTION_IN_16;
	c[1] = 0x12;
	put_be64(c, 2, lba);
	put_be32(c, 10, allocation);
	return c;
}

struct lba_status {
	uint64_t lba;
	uint32_t blocks;
	uint8_t status;
};

std::vector<lba_status> descriptors(const scsi_result &r)
{
	std::vector<lba_status> out;
	REQUIRE(r.read_len >= 8);
	uint32_t length = get_be32(r.data_in, 0);
	for (std::size_t at = 8; at + 16 <= r.read_len && at < 4 + length; at += 16)
		out.push_back({get_be64(r.data_in, at), get_be32(r.data_in, at + 8),
			       uint8_t(r.data_in[at + 12] & 0x0f)});
	return out;
}

} // namespace

// --- VERIFY(12), WRITE AND VERIFY(12) ---

TEST_CASE("VERIFY(12): BYTCHK 00b reads, 01b compares, 11b compares one block", "[block12]")
{
	lu_fixture f;
	f.fill_block(8, 0x5a, 4);
	require_good(f.run(cdb12(VERIFY_12, 8, 4)));
	CHECK(f.store.count(block_op::read) == 1);
	require_good(f.run(cdb12(VERIFY_12, 8, 4, BYTCHK_DATA), std::vector<uint8_t>(4 * 512, 0x5a)));
	require_good(f.run(cdb12(VERIFY_12, 8, 4, BYTCHK_ONE_BLOCK), std::vector<uint8_t>(512, 0x5a)));
	auto other = std::vector<uint8_t>(4 * 512, 0x5a);
	other[700] = 0;
	auto r = f.run(cdb12(VERIFY_12, 8, 4, BYTCHK_DATA), other);
	require_sense(r, MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	CHECK(r.sense.information == 700u);
}

TEST_CASE("VERIFY(12): BYTCHK 10b, a reserved bit, and its limits", "[block12]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(cdb12(VERIFY_12, 0, 1, 0x04)), 1, 2);
	require_invalid_cdb(f.run(cdb12(VERIFY_12, 0, 1, 0x01)), 1, 0);  // reserved
	require_invalid_cdb(f.run(cdb12(VERIFY_12, 0, 1, 0x20)), 1, 5);  // VRPROTECT
	require_sense(f.run(cdb12(VERIFY_12, 1020, 5)), ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	f.lu->set_max_transfer_blocks(4);
	require_invalid_cdb(f.run(cdb12(VERIFY_12, 0, 5)), 6);
	require_good(f.run(cdb12(VERIFY_12, 0, 0)));  // zero length: nothing
	CHECK(f.store.count(block_op::read) == 0);
}

TEST_CASE("VERIFY(12) takes a GROUP NUMBER", "[block12]")
{
	lu_fixture f;
	auto c = cdb12(VERIFY_12, 0, 1);
	c[10] = 0x1f;
	require_good(f.run(c));
	c[10] = 0x20;
	require_invalid_cdb(f.run(c), 10, 5);
}

TEST_CASE("WRITE AND VERIFY(12) writes FUA then verifies; BYTCHK 1xb is invalid", "[block12]")
{
	lu_fixture f;
	auto data = pattern(2 * 512, 9);
	require_good(f.run(cdb12(WRITE_VERIFY_12, 30, 2, BYTCHK_DATA), data));
	auto h = f.store.history();
	REQUIRE(h.size() == 2);
	CHECK(h[0].op == block_op::write);
	CHECK(h[0].fua);
	CHECK(h[0].offset == 30 * 512);
	CHECK(h[1].op == block_op::read);
	CHECK(std::equal(data.begin(), data.end(), f.block(30, 2).begin()));
	require_good(f.run(cdb12(WRITE_VERIFY_12, 30, 2), data));  // BYTCHK 00b
	require_invalid_cdb(f.run(cdb12(WRITE_VERIFY_12, 30, 2, 0x04), data), 1, 2);
	require_invalid_cdb(f.run(cdb12(WRITE_VERIFY_12, 30, 2, BYTCHK_ONE_BLOCK), data), 1, 2);
	require_sense(f.run(cdb12(WRITE_VERIFY_12, 30, 2), std::vector<uint8_t>(512)),
		      ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
}

// --- PREVENT ALLOW MEDIUM REMOVAL ---

TEST_CASE("PREVENT ALLOW MEDIUM REMOVAL: PREVENT 00b/01b GOOD, 1xb and reserved bits invalid",
	  "[prevent]")
{
	lu_fixture f;
	require_good(f.run({PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 0, 0}));
	require_good(f.run({PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 1, 0}));
	require_invalid_cdb(f.run({PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 2, 0}), 4, 1);
	require_invalid_cdb(f.run({PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 3, 0}), 4, 1);
	require_invalid_cdb(f.run({PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 4, 0}), 4, 2);
	require_invalid_cdb(f.run({PREVENT_ALLOW_MEDIUM_REMOVAL, 1, 0, 0, 0, 0}), 1, 0);
	require_invalid_cdb(f.run({PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0x80, 0, 0, 0}), 2, 7);
	CHECK(f.store.history().empty());
}

// --- READ DEFECT DATA ---

TEST_CASE("READ DEFECT DATA(10): empty lists, flags and format echoed", "[defects]")
{
	lu_fixture f;
	auto r = f.run({READ_DEFECT_DATA_10, 0, 0x1d, 0, 0, 0, 0, 0, 255, 0}, {}, 255);
	require_good(r);
	REQUIRE(r.read_len == 4);
	CHECK(r.data_in[1] == 0x1d);  // PLISTV GLISTV, long block format
	CHECK(get_be16(r.data_in, 2) == 0);
	// ALLOCATION LENGTH cuts the header.
	r = f.run({READ_DEFECT_DATA_10, 0, 0x18, 0, 0, 0, 0, 0, 2, 0}, {}, 255);
	require_good(r);
	CHECK(r.read_len == 2);
	r = f.run({READ_DEFECT_DATA_10, 0, 0x08, 0, 0, 0, 0, 0, 0, 0}, {}, 255);
	require_good(r);
	CHECK(r.read_len == 0);
}

TEST_CASE("READ DEFECT DATA(10): format 111b and reserved bits are invalid", "[defects]")
{
	lu_fixture f;
	require_invalid_cdb(f.run({READ_DEFECT_DATA_10, 0, 0x07, 0, 0, 0, 0, 0, 8, 0}, {}, 8), 2, 2);
	require_invalid_cdb(f.run({READ_DEFECT_DATA_10, 0, 0x20, 0, 0, 0, 0, 0, 8, 0}, {}, 8), 2, 5);
	require_invalid_cdb(f.run({READ_DEFECT_DATA_10, 1, 0, 0, 0, 0, 0, 0, 8, 0}, {}, 8), 1, 0);
	require_invalid_cdb(f.run({READ_DEFECT_DATA_10, 0, 0, 1, 0, 0, 0, 0, 8, 0}, {}, 8), 3, 0);
}

TEST_CASE("READ DEFECT DATA(12): an 8-byte header, 32-bit allocation length", "[defects]")
{
	lu_fixture f;
	std::vector<uint8_t> c = {READ_DEFECT_DATA_12, 0x0c, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
	auto r = f.run(c, {}, 512);
	require_good(r);
	REQUIRE(r.read_len == 8);
	CHECK(r.data_in[1] == 0x0c);
	CHECK(get_be32(r.data_in, 4) == 0);
	c[1] = 0x0f;
	require_invalid_cdb(f.run(c, {}, 512), 1, 2);
	c[1] = 0x20;
	require_invalid_cdb(f.run(c, {}, 512), 1, 5);
	c[1] = 0;
	c[10] = 1;
	require_invalid_cdb(f.run(c, {}, 512), 10, 0);
}

// --- PRE-FETCH ---

TEST_CASE("PRE-FETCH(10) reads ahead the range and is CONDITION MET", "[prefetch]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps.prefetch = true; });
	auto r = f.run(cdb10(PRE_FETCH_10, 100, 20));
	CHECK(r.status == SAM_STAT_CONDITION_MET);
	CHECK(r.sense_bytes.empty());
	auto h = f.store.history();
	REQUIRE(h.size() == 1);
	CHECK(h[0].op == block_op::prefetch);
	CHECK(h[0].offset == 100 * 512);
	CHECK(h[0].length == 20 * 512);
	// IMMED is accepted and answered the same way.
	CHECK(f.run(cdb10(PRE_FETCH_10, 100, 20, 0x02)).status == SAM_STAT_CONDITION_MET);
}

TEST_CASE("PRE-FETCH(16): PREFETCH LENGTH 0 is the rest of the medium", "[prefetch]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps.prefetch = true; });
	CHECK(f.run(cdb16(PRE_FETCH_16, 1000, 0)).status == SAM_STAT_CONDITION_MET);
	auto h = f.store.history();
	REQUIRE(h.size() == 1);
	CHECK(h[0].offset == 1000 * 512);
	CHECK(h[0].length == 24 * 512);
}

TEST_CASE("PRE-FETCH without a cache (O_DIRECT) is GOOD and reads nothing", "[prefetch]")
{
	lu_fixture f;
	require_good(f.run(cdb10(PRE_FETCH_10, 0, 8)));
	CHECK(f.store.history().empty());
}

TEST_CASE("PRE-FETCH: range, reserved bits, no transfer-length limit, errors", "[prefetch]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps.prefetch = true; });
	auto r = f.run(cdb10(PRE_FETCH_10, 1020, 5));
	require_sense(r, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	CHECK(r.sense.information == 1020u);
	require_sense(f.run(cdb16(PRE_FETCH_16, 1024, 0)), ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	require_invalid_cdb(f.run(cdb10(PRE_FETCH_10, 0, 1, 0x01)), 1, 0);
	require_invalid_cdb(f.run(cdb16(PRE_FETCH_16, 0, 1, 0x04)), 1, 2);
	// Nothing is transferred, so MAXIMUM TRANSFER LENGTH does not apply.
	f.lu->set_max_transfer_blocks(4);
	CHECK(f.run(cdb10(PRE_FETCH_10, 0, 64)).status == SAM_STAT_CONDITION_MET);
	f.store.inject(block_op::prefetch, -EIO);
	require_sense(f.run(cdb10(PRE_FETCH_10, 8, 1)), MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
}

// --- GET LBA STATUS ---

TEST_CASE("GET LBA STATUS: a fully written medium is one mapped run", "[lba-status]")
{
	lu_fixture f;
	auto r = f.run(get_lba_status_cdb(10, 64), {}, 64);
	require_good(r);
	auto d = descriptors(r);
	REQUIRE(d.size() == 1);
	CHECK(d[0].lba == 10);
	CHECK(d[0].blocks == 1014);
	CHECK(d[0].status == 0);
	CHECK(get_be32(r.data_in, 0) == 20);
}

TEST_CASE("GET LBA STATUS: deallocated runs after UNMAP", "[lba-status]")
{
	lu_fixture f;
	std::vector<uint8_t> list(24, 0);
	put_be16(list, 0, 22);
	put_be16(list, 2, 16);
	put_be64(list, 8, 16);
	put_be32(list, 16, 16);
	std::vector<uint8_t> unmap = {UNMAP, 0, 0, 0, 0, 0, 0, 0, 24, 0};
	require_good(f.run(unmap, list));
	auto r = f.run(get_lba_status_cdb(0, 1024), {}, 1024);
	require_good(r);
	auto d = descriptors(r);
	REQUIRE(d.size() == 3);
	CHECK((d[0].lba == 0 && d[0].blocks == 16 && d[0].status == 0));
	CHECK((d[1].lba == 16 && d[1].blocks == 16 && d[1].status == 1));
	CHECK((d[2].lba == 32 && d[2].blocks == 992 && d[2].status == 0));
	// Starting inside the hole; a write maps a block again.
	require_good(f.run(cdb10(WRITE_10, 20, 1), std::vector<uint8_t>(512, 1)));
	d = descriptors(f.run(get_lba_status_cdb(18, 1024), {}, 1024));
	REQUIRE(d.size() == 4);
	CHECK((d[0].lba == 18 && d[0].blocks == 2 && d[0].status == 1));
	CHECK((d[1].lba == 20 && d[1].blocks == 1 && d[1].status == 0));
	CHECK((d[2].lba == 21 && d[2].blocks == 11 && d[2].status == 1));
}

TEST_CASE("GET LBA STATUS: the allocation length bounds the descriptors", "[lba-status]")
{
	lu_fixture f;
	std::vector<uint8_t> list(24, 0);
	put_be16(list, 0, 22);
	put_be16(list, 2, 16);
	put_be64(list, 8, 16);
	put_be32(list, 16, 16);
	require_good(f.run({UNMAP, 0, 0, 0, 0, 0, 0, 0, 24, 0}, list));
	auto r = f.run(get_lba_status_cdb(0, 24), {}, 1024);
	require_good(r);
	CHECK(r.read_len == 24);
	CHECK(get_be32(r.data_in, 0) == 20);  // one descriptor, fully returned
	r = f.run(get_lba_status_cdb(0, 4), {}, 1024);
	require_good(r);
	CHECK(r.read_len == 4);
	r = f.run(get_lba_status_cdb(0, 0), {}, 1024);
	require_good(r);
	CHECK(r.read_len == 0);
}

TEST_CASE("GET LBA STATUS: STARTING LBA past the end, reserved bits", "[lba-status]")
{
	lu_fixture f;
	auto r = f.run(get_lba_status_cdb(1024, 64), {}, 64);
	require_sense(r, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	CHECK(r.sense.information == 1024u);
	require_good(f.run(get_lba_status_cdb(1023, 64), {}, 64));
	auto c = get_lba_status_cdb(0, 64);
	c[14] = 1;
	require_invalid_cdb(f.run(c, {}, 64), 14, 0);
	c = get_lba_status_cdb(0, 64);
	c[1] = 0x32;  // reserved bit 5 with service action 0x12
	require_invalid_cdb(f.run(c, {}, 64), 1, 5);
}

// --- ORWRITE(16) ---

TEST_CASE("ORWRITE(16) ORs the data-out buffer into the medium", "[orwrite]")
{
	lu_fixture f;
	f.fill_block(40, 0x0f, 2);
	f.fill_block(42, 0x77);
	require_good(f.run(cdb16(ORWRITE_16, 40, 2), std::vector<uint8_t>(2 * 512, 0xf0)));
	for (uint8_t b : f.block(40, 2))
		REQUIRE(b == 0xff);
	CHECK(f.block(42)[0] == 0x77);
	auto h = f.store.history();
	REQUIRE(h.size() == 2);
	CHECK(h[0].op == block_op::read);
	CHECK(h[1].op == block_op::write);
	CHECK_FALSE(h[1].fua);
}

TEST_CASE("ORWRITE(16): FUA, limits, zero length and short buffers", "[orwrite]")
{
	lu_fixture f;
	require_good(f.run(cdb16(ORWRITE_16, 0, 1, 0x08), std::vector<uint8_t>(512, 1)));
	CHECK(f.store.history().back().fua);
	require_sense(f.run(cdb16(ORWRITE_16, 1023, 2), std::vector<uint8_t>(1024)), ILLEGAL_REQUEST,
		      ASC_LBA_OUT_OF_RANGE);
	require_invalid_cdb(f.run(cdb16(ORWRITE_16, 0, 1, 0x20), std::vector<uint8_t>(512)), 1, 5);
	require_invalid_cdb(f.run(cdb16(ORWRITE_16, 0, 1, 0x04), std::vector<uint8_t>(512)), 1, 2);
	f.lu->set_max_transfer_blocks(2);
	require_invalid_cdb(f.run(cdb16(ORWRITE_16, 0, 3), std::vector<uint8_t>(3 * 512)), 10);
	std::size_t before = f.store.history().size();
	require_good(f.run(cdb16(ORWRITE_16, 0, 0)));
	require_sense(f.run(cdb16(ORWRITE_16, 0, 2), std::vector<uint8_t>(512)), ILLEGAL_REQUEST,
		      ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(f.store.history().size() == before);
}

TEST_CASE("ORWRITE(16) spanning several chunks ORs every block", "[orwrite]")
{
	lu_fixture f;
	f.fill_block(0, 0x01, 600);
	require_good(f.run(cdb16(ORWRITE_16, 0, 600), std::vector<uint8_t>(600 * 512, 0x02)));
	for (uint8_t b : f.block(0, 600))
		REQUIRE(b == 0x03);
}

TEST_CASE("ORWRITE(16) reports a read error before writing anything", "[orwrite]")
{
	lu_fixture f;
	f.store.inject(block_op::read, -EIO);
	auto r = f.run(cdb16(ORWRITE_16, 5, 1), std::vector<uint8_t>(512, 1));
	require_sense(r, MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	CHECK(f.store.count(block_op::write) == 0);
}

// --- FORMAT UNIT, SEND DIAGNOSTIC ---

TEST_CASE("FORMAT UNIT without a parameter list is GOOD and keeps the data", "[format]")
{
	lu_fixture f;
	f.fill_block(3, 0x42);
	require_good(f.run({FORMAT_UNIT, 0, 0, 0, 0, 0}));
	CHECK(f.block(3)[0] == 0x42);
	CHECK(f.store.history().empty());
	require_invalid_cdb(f.run({FORMAT_UNIT, 0x10, 0, 0, 0, 0}, std::vector<uint8_t>(4)), 1, 4);
	require_invalid_cdb(f.run({FORMAT_UNIT, 0x80, 0, 0, 0, 0}), 1, 7);  // FMTPINFO
	require_invalid_cdb(f.run({FORMAT_UNIT, 0x08, 0, 0, 0, 0}), 1, 3);  // CMPLST
	require_invalid_cdb(f.run({FORMAT_UNIT, 0, 0, 0, 0x01, 0}), 4, 0);  // FFMT
}

TEST_CASE("SEND DIAGNOSTIC: the default self-test reads the medium", "[diagnostic]")
{
	lu_fixture f;
	require_good(f.run({SEND_DIAGNOSTIC, 0x04, 0, 0, 0, 0}));
	CHECK(f.store.count(block_op::read) == 1);
	f.store.inject(block_op::read, -EIO);
	require_sense(f.run({SEND_DIAGNOSTIC, 0x04, 0, 0, 0, 0}), MEDIUM_ERROR,
		      ASC_UNRECOVERED_READ_ERROR);
	require_good(f.run({SEND_DIAGNOSTIC, 0, 0, 0, 0, 0}));
	require_good(f.run({SEND_DIAGNOSTIC, 0x80, 0, 0, 0, 0}));  // abort: nothing running
}

TEST_CASE("SEND DIAGNOSTIC: extended self-tests and parameter lists are refused",
	  "[diagnostic]")
{
	lu_fixture f;
	require_invalid_cdb(f.run({SEND_DIAGNOSTIC, 0x24, 0, 0, 0, 0}), 1, 7);  // code + SELFTEST
	require_invalid_cdb(f.run({SEND_DIAGNOSTIC, 0x20, 0, 0, 0, 0}), 1, 7);  // background short
	require_invalid_cdb(f.run({SEND_DIAGNOSTIC, 0x10, 0, 0, 8, 0}, std::vector<uint8_t>(8)), 3);
	require_invalid_cdb(f.run({SEND_DIAGNOSTIC, 0x08, 0, 0, 0, 0}), 1, 3);  // reserved
	require_invalid_cdb(f.run({SEND_DIAGNOSTIC, 0, 1, 0, 0, 0}), 2, 0);
	CHECK(f.store.history().empty());
}
