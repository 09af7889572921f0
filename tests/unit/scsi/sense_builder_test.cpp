// SPDX-License-Identifier: GPL-2.0-or-later
// sense_builder: the byte layout of fixed (0x70) and descriptor (0x72) sense.
#include <catch2/catch.hpp>

#include <array>

#include "sense_builder.h"

using namespace tcmud::scsi;

TEST_CASE("fixed sense puts key, ASC and ASCQ at SPC-5 offsets", "[sense]")
{
	std::array<uint8_t, 96> out{};
	std::size_t n = sense_builder(ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE).build(sense_format::fixed, out);
	REQUIRE(n == 18);
	CHECK(out[0] == 0x70);
	CHECK(out[2] == ILLEGAL_REQUEST);
	CHECK(out[7] == 10);
	CHECK(out[12] == 0x21);
	CHECK(out[13] == 0x00);
	CHECK(out[15] == 0);  // no SKSV without a field pointer
}

TEST_CASE("fixed sense INFORMATION sets VALID and holds 32 bits", "[sense]")
{
	std::array<uint8_t, 96> out{};
	sense_builder(MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR).information(0x12345678).build(sense_format::fixed, out);
	CHECK(out[0] == 0xf0);
	CHECK(out[3] == 0x12);
	CHECK(out[6] == 0x78);
}

TEST_CASE("fixed sense leaves VALID clear when INFORMATION exceeds 32 bits", "[sense]")
{
	std::array<uint8_t, 96> out{};
	sense_builder(MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR).information(1ull << 32).build(sense_format::fixed, out);
	CHECK(out[0] == 0x70);
}

TEST_CASE("descriptor sense carries a 64-bit information descriptor", "[sense]")
{
	std::array<uint8_t, 96> out{};
	std::size_t n = sense_builder(MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY)
				.information(0x0102030405060708ull)
				.build(sense_format::descriptor, out);
	REQUIRE(n == 20);
	CHECK(out[0] == 0x72);
	CHECK(out[1] == MISCOMPARE);
	CHECK(out[2] == 0x1d);
	CHECK(out[7] == 12);
	CHECK(out[8] == 0x00);
	CHECK(out[9] == 0x0a);
	CHECK(out[10] == 0x80);
	CHECK(out[12] == 0x01);
	CHECK(out[19] == 0x08);
}

TEST_CASE("field pointer into the CDB sets SKSV, C/D, BPV and the bit", "[sense]")
{
	std::array<uint8_t, 96> out{};
	sense_builder(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB).field(cdb_field(0x0102, 5)).build(sense_format::fixed, out);
	CHECK(out[15] == (0x80 | 0x40 | 0x08 | 5));
	CHECK(out[16] == 0x01);
	CHECK(out[17] == 0x02);
}

TEST_CASE("field pointer into the parameter list has C/D clear and no BPV", "[sense]")
{
	std::array<uint8_t, 96> out{};
	std::size_t n = sense_builder(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST)
				.field(parameter_field(9))
				.build(sense_format::descriptor, out);
	REQUIRE(n == 16);
	CHECK(out[8] == 0x02);
	CHECK(out[9] == 0x06);
	CHECK(out[12] == 0x80);
	CHECK(out[14] == 9);
}

TEST_CASE("sense is truncated to the buffer it is built into", "[sense]")
{
	std::array<uint8_t, 8> out{};
	std::size_t n = sense_builder(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB).build(sense_format::fixed, out);
	CHECK(n == 8);
}

TEST_CASE("sense_key_of reads the key of either format, current or deferred", "[sense]")
{
	std::array<uint8_t, 96> out{};
	sense_builder b(MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	size_t n = b.build(sense_format::fixed, out);
	CHECK(sense_key_of(std::span(out).first(n)) == MEDIUM_ERROR);
	n = b.build(sense_format::descriptor, out);
	CHECK(sense_key_of(std::span(out).first(n)) == MEDIUM_ERROR);
	out[0] = 0x73; // descriptor, deferred
	CHECK(sense_key_of(std::span(out).first(n)) == MEDIUM_ERROR);
	out[0] = 0x7f; // vendor specific: no key to read
	CHECK(sense_key_of(std::span(out).first(n)) == -1);
	CHECK(sense_key_of({}) == -1);
}
