// SPDX-License-Identifier: GPL-2.0-or-later
// MODE SENSE(6/10) and MODE SELECT(6/10): caching and control pages.
#include <catch2/catch.hpp>

#include "byte_order.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;

namespace {

std::vector<uint8_t> mode_sense6(uint8_t page_byte, uint8_t byte1 = 0, uint8_t subpage = 0)
{
	return {MODE_SENSE_6, byte1, page_byte, subpage, 255, 0};
}

std::vector<uint8_t> mode_sense10(uint8_t page_byte, uint8_t byte1 = 0)
{
	return {MODE_SENSE_10, byte1, page_byte, 0, 0, 0, 0, 1, 0, 0};
}

std::vector<uint8_t> mode_select6(std::size_t length, uint8_t byte1 = 0x10)
{
	return {MODE_SELECT_6, byte1, 0, 0, static_cast<uint8_t>(length), 0};
}

// A MODE SELECT(6) parameter list: header without block descriptor, then
// the caching page with WCE as given.
std::vector<uint8_t> caching_list(bool wce)
{
	std::vector<uint8_t> l{0, 0, 0, 0, 0x08, 0x12};
	l.resize(4 + 20);
	l[6] = wce ? 0x04 : 0;
	return l;
}

std::vector<uint8_t> control_list(bool d_sense)
{
	std::vector<uint8_t> l{0, 0, 0, 0, 0x0a, 0x0a};
	l.resize(4 + 12);
	l[6] = d_sense ? 0x04 : 0;
	l[7] = 0x10;
	return l;
}

} // namespace

TEST_CASE("MODE SENSE(6) all pages has header, block descriptor, caching and control", "[mode]")
{
	lu_fixture f;
	auto r = f.run(mode_sense6(0x3f), {}, 255);
	require_good(r);
	REQUIRE(r.read_len == 4 + 8 + 20 + 12);
	CHECK(r.data_in[0] == r.read_len - 1);
	CHECK(r.data_in[2] == 0x10);  // DPOFUA
	CHECK(r.data_in[3] == 8);
	CHECK(get_be32(r.data_in, 4) == lu_fixture::BLOCKS);
	CHECK(get_be(r.data_in, 9, 3) == lu_fixture::BLOCK);
	CHECK(r.data_in[12] == 0x08);
	CHECK(r.data_in[13] == 0x12);
	CHECK(r.data_in[14] == 0x04);  // WCE
	CHECK(r.data_in[32] == 0x0a);
	CHECK(r.data_in[33] == 0x0a);
}

TEST_CASE("MODE SENSE(6) DBD leaves out the block descriptor", "[mode]")
{
	lu_fixture f;
	auto r = f.run(mode_sense6(0x08, 0x08), {}, 255);
	require_good(r);
	REQUIRE(r.read_len == 4 + 20);
	CHECK(r.data_in[3] == 0);
	CHECK(r.data_in[4] == 0x08);
}

TEST_CASE("MODE SENSE(10) with LLBAA returns a long LBA block descriptor", "[mode]")
{
	lu_fixture f;
	auto r = f.run(mode_sense10(0x0a, 0x10), {}, 256);
	require_good(r);
	REQUIRE(r.read_len == 8 + 16 + 12);
	CHECK(get_be16(r.data_in, 0) == r.read_len - 2);
	CHECK(r.data_in[4] == 0x01);  // LONGLBA
	CHECK(get_be16(r.data_in, 6) == 16);
	CHECK(get_be64(r.data_in, 8) == lu_fixture::BLOCKS);
	CHECK(get_be32(r.data_in, 20) == lu_fixture::BLOCK);
	CHECK(r.data_in[24] == 0x0a);
}

TEST_CASE("MODE SENSE changeable values mark only WCE and D_SENSE", "[mode]")
{
	lu_fixture f;
	auto r = f.run(mode_sense6(0x40 | 0x3f, 0x08), {}, 255);
	require_good(r);
	std::vector<uint8_t> caching(r.data_in.begin() + 4, r.data_in.begin() + 24);
	std::vector<uint8_t> control(r.data_in.begin() + 24, r.data_in.begin() + 36);
	CHECK(caching[2] == 0x04);
	CHECK(std::count(caching.begin() + 3, caching.end(), 0) == 17);
	CHECK(control[2] == 0x04);
	CHECK(std::count(control.begin() + 3, control.end(), 0) == 9);
}

TEST_CASE("MODE SENSE default values show the configured write cache", "[mode]")
{
	lu_fixture f([](logical_unit_config &c) { c.write_cache_enabled = false; });
	f.lu->set_write_cache_enabled(true);
	auto r = f.run(mode_sense6(0x80 | 0x08, 0x08), {}, 255);
	require_good(r);
	CHECK(r.data_in[6] == 0);
}

TEST_CASE("MODE SENSE saved values is SAVING PARAMETERS NOT SUPPORTED", "[mode]")
{
	lu_fixture f;
	auto r = f.run(mode_sense6(0xc0 | 0x08), {}, 255);
	require_sense(r, ILLEGAL_REQUEST, ASC_SAVING_PARAMETERS_NOT_SUPPORTED);
	CHECK(r.sense.field == 2);
}

TEST_CASE("MODE SENSE of an unsupported page is an invalid field at the page code", "[mode]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(mode_sense6(0x19), {}, 255), 2, 5);
}

TEST_CASE("MODE SENSE of a subpage is an invalid field at the subpage", "[mode]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(mode_sense6(0x0a, 0, 0x01), {}, 255), 3);
}

TEST_CASE("MODE SENSE accepts all subpages of all pages", "[mode]")
{
	lu_fixture f;
	auto r = f.run(mode_sense6(0x3f, 0x08, 0xff), {}, 255);
	require_good(r);
	CHECK(r.read_len == 4 + 20 + 12);
}

TEST_CASE("MODE SENSE stops at the allocation length", "[mode]")
{
	lu_fixture f;
	auto cdb = mode_sense6(0x3f);
	cdb[4] = 10;
	auto r = f.run(cdb, {}, 255);
	require_good(r);
	CHECK(r.read_len == 10);
	CHECK(r.data_in[0] == 4 + 8 + 20 + 12 - 1);  // the full length, even so
}

TEST_CASE("MODE SELECT clearing WCE makes every later write FUA", "[mode]")
{
	lu_fixture f;
	auto list = caching_list(false);
	require_good(f.run(mode_select6(list.size()), list));
	CHECK_FALSE(f.lu->write_cache_enabled());
	require_good(f.run(cdb10(WRITE_10, 0, 1), std::vector<uint8_t>(512, 1)));
	REQUIRE(f.store.history().size() == 1);
	CHECK(f.store.history()[0].fua);
}

TEST_CASE("MODE SELECT setting D_SENSE switches errors to descriptor format", "[mode]")
{
	lu_fixture f;
	auto list = control_list(true);
	require_good(f.run(mode_select6(list.size()), list));
	auto r = f.run(cdb10(READ_10, lu_fixture::BLOCKS, 1), {}, 512);
	require_sense(r, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	CHECK(r.sense.descriptor);
	auto sense = f.run(mode_sense6(0x0a, 0x08), {}, 255);
	CHECK(sense.data_in[6] == 0x04);
}

TEST_CASE("MODE SELECT(10) with a block descriptor that restates the geometry", "[mode]")
{
	lu_fixture f;
	std::vector<uint8_t> list(8 + 8 + 20);
	put_be16(list, 6, 8);
	put_be32(list, 8, lu_fixture::BLOCKS);
	put_be(list, 13, 3, lu_fixture::BLOCK);
	list[16] = 0x08;
	list[17] = 0x12;
	std::vector<uint8_t> cdb{MODE_SELECT_10, 0x10, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(list.size()), 0};
	require_good(f.run(cdb, list));
	CHECK_FALSE(f.lu->write_cache_enabled());
}

TEST_CASE("MODE SELECT with another block length is an invalid field in the list", "[mode]")
{
	lu_fixture f;
	std::vector<uint8_t> list(4 + 8);
	list[3] = 8;
	put_be(list, 9, 3, 4096);
	auto r = f.run(mode_select6(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK_FALSE(r.sense.c_d);
	CHECK(r.sense.field == 9);
}

TEST_CASE("MODE SELECT changing a bit that is not changeable points at it", "[mode]")
{
	lu_fixture f;
	auto list = caching_list(true);
	list[6] |= 0x01;  // RCD: not changeable
	auto r = f.run(mode_select6(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK_FALSE(r.sense.c_d);
	CHECK(r.sense.field == 6);
	CHECK(r.sense.bit == 0);
	CHECK(f.lu->write_cache_enabled());
}

TEST_CASE("MODE SELECT with a wrong page length points at the length", "[mode]")
{
	lu_fixture f;
	std::vector<uint8_t> list{0, 0, 0, 0, 0x08, 0x10};
	list.resize(4 + 18);
	auto r = f.run(mode_select6(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK(r.sense.field == 5);
}

TEST_CASE("MODE SELECT of an unknown page points at the page code", "[mode]")
{
	lu_fixture f;
	std::vector<uint8_t> list{0, 0, 0, 0, 0x19, 0x02, 0, 0};
	auto r = f.run(mode_select6(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK(r.sense.field == 4);
	CHECK(r.sense.bit == 5);
}

TEST_CASE("MODE SELECT with a page cut short is a PARAMETER LIST LENGTH ERROR", "[mode]")
{
	lu_fixture f;
	auto list = caching_list(false);
	list.resize(10);
	auto r = f.run(mode_select6(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	CHECK(f.lu->write_cache_enabled());
}

TEST_CASE("MODE SELECT shorter than its header is a PARAMETER LIST LENGTH ERROR", "[mode]")
{
	lu_fixture f;
	std::vector<uint8_t> list{0, 0, 0};
	require_sense(f.run(mode_select6(list.size()), list), ILLEGAL_REQUEST,
		      ASC_PARAMETER_LIST_LENGTH_ERROR);
}

TEST_CASE("MODE SELECT applies nothing when a later page is bad", "[mode]")
{
	lu_fixture f;
	auto list = caching_list(false);
	list.insert(list.end(), {0x0a, 0x0a, 0x04, 0x10, 0xff, 0, 0, 0, 0, 0, 0, 0});
	auto r = f.run(mode_select6(list.size()), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK(f.lu->write_cache_enabled());
	CHECK_FALSE(f.lu->descriptor_sense());
}

TEST_CASE("MODE SELECT without PF is an invalid field", "[mode]")
{
	lu_fixture f;
	auto list = caching_list(false);
	require_invalid_cdb(f.run(mode_select6(list.size(), 0x00), list), 1, 4);
}

TEST_CASE("MODE SELECT with SP is an invalid field", "[mode]")
{
	lu_fixture f;
	auto list = caching_list(false);
	require_invalid_cdb(f.run(mode_select6(list.size(), 0x11), list), 1, 0);
}

TEST_CASE("MODE SELECT with a zero-length list is GOOD", "[mode]")
{
	lu_fixture f;
	require_good(f.run(mode_select6(0)));
}

TEST_CASE("MODE SELECT with less data than its list length is refused", "[mode]")
{
	lu_fixture f;
	auto list = caching_list(false);
	auto r = f.run(mode_select6(list.size() + 4), list);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(f.lu->write_cache_enabled());
}
