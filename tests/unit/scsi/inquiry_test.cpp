// SPDX-License-Identifier: GPL-2.0-or-later
// INQUIRY: standard data and VPD pages 0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2.
#include <catch2/catch.hpp>

#include <tuple>

#include <string>

#include "byte_order.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;

namespace {

std::string text(const std::vector<uint8_t> &d, std::size_t off, std::size_t n)
{
	return std::string(d.begin() + static_cast<long>(off), d.begin() + static_cast<long>(off + n));
}

} // namespace

TEST_CASE("standard INQUIRY describes a direct-access SPC-4 device", "[inquiry]")
{
	lu_fixture f;
	auto r = f.run(inquiry_cdb(false, 0, 255), {}, 255);
	require_good(r);
	REQUIRE(r.read_len == 66);
	CHECK(r.data_in[0] == 0x00);
	CHECK(r.data_in[2] == 0x06);
	CHECK((r.data_in[3] & 0x0f) == 2);
	CHECK(r.data_in[4] == 61);
	CHECK((r.data_in[7] & 0x02) != 0);
	CHECK(text(r.data_in, 8, 8) == "TCMUD   ");
	CHECK(text(r.data_in, 16, 16) == "unit test disk  ");
	CHECK(text(r.data_in, 32, 4) == "0.1 ");
}

TEST_CASE("INQUIRY returns no more than the allocation length", "[inquiry]")
{
	lu_fixture f;
	auto r = f.run(inquiry_cdb(false, 0, 5), {}, 255);
	require_good(r);
	CHECK(r.read_len == 5);
}

TEST_CASE("INQUIRY with a data-in buffer shorter than the allocation length stops at the buffer", "[inquiry]")
{
	lu_fixture f;
	auto r = f.run(inquiry_cdb(false, 0, 255), {}, 36);
	require_good(r);
	CHECK(r.read_len == 36);
}

TEST_CASE("INQUIRY with a page code but no EVPD is an invalid field", "[inquiry]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(inquiry_cdb(false, 0x80, 255), {}, 255), 2);
}

TEST_CASE("INQUIRY CMDDT is an invalid field", "[inquiry]")
{
	lu_fixture f;
	auto cdb = inquiry_cdb(false, 0, 255);
	cdb[1] = 0x02;
	require_invalid_cdb(f.run(cdb, {}, 255), 1, 1);
}

TEST_CASE("an unsupported VPD page is an invalid field", "[inquiry]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(inquiry_cdb(true, 0x89, 255), {}, 255), 2);
}

TEST_CASE("VPD 0x00 lists the supported pages", "[inquiry]")
{
	lu_fixture f;
	auto r = f.run(inquiry_cdb(true, 0x00, 255), {}, 255);
	require_good(r);
	CHECK(r.data_in == std::vector<uint8_t>{0, 0, 0, 7, 0x00, 0x80, 0x83, 0x8f, 0xb0, 0xb1, 0xb2});
}

TEST_CASE("VPD 0x80 returns the unit serial", "[inquiry]")
{
	lu_fixture f;
	auto r = f.run(inquiry_cdb(true, 0x80, 255), {}, 255);
	require_good(r);
	REQUIRE(r.read_len == 4 + 20);
	CHECK(r.data_in[1] == 0x80);
	CHECK(get_be16(r.data_in, 2) == 20);
	CHECK(text(r.data_in, 4, 20) == "0123456789abcdef-xyz");
}

TEST_CASE("the serial callback is called only for VPD 0x80 and 0x83", "[inquiry]")
{
	int calls = 0;
	lu_fixture f([&](logical_unit_config &c) {
		c.unit_serial = [&] {
			calls++;
			return std::string("abc");
		};
	});
	f.run(inquiry_cdb(false, 0, 255), {}, 255);
	f.run(inquiry_cdb(true, 0xb0, 255), {}, 255);
	CHECK(calls == 0);
	f.run(inquiry_cdb(true, 0x80, 255), {}, 255);
	f.run(inquiry_cdb(true, 0x83, 255), {}, 255);
	CHECK(calls == 2);
}

TEST_CASE("VPD 0x83 has an NAA 6 designator built from the serial's hex digits", "[inquiry]")
{
	lu_fixture f;
	auto r = f.run(inquiry_cdb(true, 0x83, 255), {}, 255);
	require_good(r);
	REQUIRE(r.data_in[1] == 0x83);
	REQUIRE(get_be16(r.data_in, 2) == r.read_len - 4);
	CHECK(r.data_in[4] == 0x01);  // binary
	CHECK(r.data_in[5] == 0x03);  // LU, NAA
	REQUIRE(r.data_in[7] == 16);
	// NAA 6, company 0x001405, then serial nibbles 0123456789abcdef...
	std::vector<uint8_t> naa(r.data_in.begin() + 8, r.data_in.begin() + 24);
	CHECK(naa == std::vector<uint8_t>{0x60, 0x01, 0x40, 0x50, 0x12, 0x34, 0x56, 0x78, 0x9a,
					  0xbc, 0xde, 0xf0, 0x00, 0x00, 0x00, 0x00});
}

TEST_CASE("VPD 0x83 has a T10 vendor ID designator of vendor and serial", "[inquiry]")
{
	lu_fixture f;
	auto r = f.run(inquiry_cdb(true, 0x83, 255), {}, 255);
	require_good(r);
	std::size_t at = 24;
	CHECK(r.data_in[at] == 0x02);
	CHECK(r.data_in[at + 1] == 0x01);
	REQUIRE(r.data_in[at + 3] == 8 + 20);
	CHECK(text(r.data_in, at + 4, 28) == "TCMUD   0123456789abcdef-xyz");
	CHECK(r.read_len == at + 4 + 28);
}

TEST_CASE("VPD 0x83 without a serial has only the T10 designator", "[inquiry]")
{
	lu_fixture f([](logical_unit_config &c) { c.unit_serial = nullptr; });
	auto r = f.run(inquiry_cdb(true, 0x83, 255), {}, 255);
	require_good(r);
	CHECK(r.data_in[4] == 0x02);
	CHECK(r.data_in[5] == 0x01);
	CHECK(text(r.data_in, 8, 8 + 14) == "TCMUD   unit test disk");
}

TEST_CASE("VPD 0xb0 reports the block limits", "[inquiry]")
{
	lu_fixture f([](logical_unit_config &c) {
		c.max_transfer_blocks = 2048;
		c.max_unmap_blocks = 4096;
		c.max_unmap_descriptors = 16;
		c.max_write_same_blocks = 8192;
	});
	auto r = f.run(inquiry_cdb(true, 0xb0, 255), {}, 255);
	require_good(r);
	REQUIRE(r.read_len == 64);
	CHECK(get_be16(r.data_in, 2) == 0x3c);
	CHECK(r.data_in[4] == 0x01);  // WSNZ
	CHECK(r.data_in[5] == 4);     // MAXIMUM COMPARE AND WRITE LENGTH
	CHECK(get_be16(r.data_in, 6) == 8);  // 4096 / 512
	CHECK(get_be32(r.data_in, 8) == 2048);   // MAXIMUM TRANSFER LENGTH
	CHECK(get_be32(r.data_in, 12) == 2048);  // OPTIMAL TRANSFER LENGTH
	CHECK(get_be32(r.data_in, 20) == 4096);
	CHECK(get_be32(r.data_in, 24) == 16);
	CHECK(get_be64(r.data_in, 36) == 8192);
}

TEST_CASE("VPD 0xb0's defaults bound one command's work", "[inquiry]")
{
	// {block size, MAXIMUM UNMAP LBA COUNT, MAXIMUM WRITE SAME LENGTH}
	for (auto [bs, unmap, write_same] : {std::tuple<uint32_t, uint32_t, uint64_t>{512, 524288, 65535},
					     {4096, 65536, 8192}}) {
		INFO("block size " << bs);
		lu_fixture f([bs = bs](logical_unit_config &c) { c.block_size = bs; });
		auto r = f.run(inquiry_cdb(true, 0xb0, 255), {}, 255);
		require_good(r);
		CHECK(get_be32(r.data_in, 20) == unmap);
		CHECK(get_be64(r.data_in, 36) == write_same);
	}
	// The 65536-block WRITE SAME(16) with UNMAP that an initiator would
	// then check with one 32 MiB READ (past tcm_loop's limit) is refused.
	lu_fixture f;
	require_invalid_cdb(f.run(cdb16(WRITE_SAME_16, 0, 65536, 0x08), std::vector<uint8_t>(512)),
			    10);
}

TEST_CASE("VPD 0xb1 reports the medium rotation rate", "[inquiry]")
{
	lu_fixture f([](logical_unit_config &c) { c.medium_rotation_rate = 1; });
	auto r = f.run(inquiry_cdb(true, 0xb1, 255), {}, 255);
	require_good(r);
	REQUIRE(r.read_len == 64);
	CHECK(get_be16(r.data_in, 4) == 1);
}

TEST_CASE("VPD 0xb2 reports thin provisioning with LBPU, LBPWS and LBPRZ", "[inquiry]")
{
	lu_fixture f;
	auto r = f.run(inquiry_cdb(true, 0xb2, 255), {}, 255);
	require_good(r);
	REQUIRE(r.read_len == 8);
	CHECK(r.data_in[5] == (0xe0 | 0x04));
	CHECK(r.data_in[6] == 0x02);
}

TEST_CASE("VPD 0xb2 reports no provisioning when the backstore cannot discard", "[inquiry]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps = {}; });
	auto r = f.run(inquiry_cdb(true, 0xb2, 255), {}, 255);
	require_good(r);
	CHECK(r.data_in[5] == 0);
	CHECK(r.data_in[6] == 0);
}

TEST_CASE("VPD 0xb0 follows the transfer limit the ring side sets", "[inquiry]")
{
	lu_fixture f;
	f.lu->set_max_transfer_blocks(256);
	auto r = f.run(inquiry_cdb(true, 0xb0, 255), {}, 255);
	require_good(r);
	CHECK(get_be32(r.data_in, 8) == 256);
	CHECK(get_be32(r.data_in, 12) == 256);
}
