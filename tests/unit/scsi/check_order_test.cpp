// SPDX-License-Identifier: GPL-2.0-or-later
// The order in which a CDB's checks run (docs/scsi.md "Order of checks"):
// opcode, service action, CDB usage bits, field values, transfer length
// against the maximum, LBA range, zero length, data buffer length, then the
// parameter list. Each case breaks two rules at once and expects the earlier.
#include <catch2/catch.hpp>

#include "byte_order.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;

TEST_CASE("order: an unknown opcode wins over everything", "[order]")
{
	lu_fixture f;
	require_sense(f.run({0xc5, 0xff, 0xff}), ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
}

TEST_CASE("order: an unknown service action before reserved bits", "[order]")
{
	lu_fixture f;
	auto c = read_capacity_16_cdb();
	c[1] = 0x1f;
	c[14] = 0xff;
	require_invalid_cdb(f.run(c, {}, 32), 1, 4);
}

TEST_CASE("order: a reserved bit before the transfer length and the LBA", "[order]")
{
	lu_fixture f;
	f.lu->set_max_transfer_blocks(8);
	require_invalid_cdb(f.run(cdb10(READ_10, 5000, 9, 0x01), {}, 9 * 512), 1, 0);
}

TEST_CASE("order: a field value (BYTCHK 10b) before the transfer length and the LBA", "[order]")
{
	lu_fixture f;
	f.lu->set_max_transfer_blocks(8);
	require_invalid_cdb(f.run(cdb10(VERIFY_10, 5000, 9, 0x04)), 1, 2);
}

TEST_CASE("order: the transfer length before the LBA range", "[order]")
{
	lu_fixture f;
	f.lu->set_max_transfer_blocks(8);
	require_invalid_cdb(f.run(cdb16(READ_16, 5000, 9), {}, 9 * 512), 10);
	require_invalid_cdb(f.run(cdb16(WRITE_16, 5000, 9), std::vector<uint8_t>(9 * 512)), 10);
	require_invalid_cdb(f.run(compare_and_write_cdb(5000, 5), std::vector<uint8_t>(10 * 512)), 13);
}

TEST_CASE("order: the LBA range before zero length and the buffer", "[order]")
{
	lu_fixture f;
	// LBA past the capacity with zero blocks; LBA + length wrapping 2^64.
	require_sense(f.run(cdb16(READ_16, 1025, 0)), ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	require_sense(f.run(cdb16(READ_16, UINT64_MAX, 2), {}, 0), ILLEGAL_REQUEST,
		      ASC_LBA_OUT_OF_RANGE);
	require_sense(f.run(cdb10(WRITE_10, 1023, 2), std::vector<uint8_t>(1)), ILLEGAL_REQUEST,
		      ASC_LBA_OUT_OF_RANGE);
	// At the capacity with zero blocks is not out of range (as LIO answers).
	require_good(f.run(cdb16(READ_16, 1024, 0)));
}

TEST_CASE("order: zero length is GOOD before the buffer is looked at", "[order]")
{
	lu_fixture f;
	require_good(f.run(cdb10(WRITE_10, 0, 0)));
	require_good(f.run(cdb10(VERIFY_10, 0, 0, 0x02)));
	CHECK(f.store.history().empty());
}

TEST_CASE("order: the data buffer before any I/O", "[order]")
{
	lu_fixture f;
	require_sense(f.run(cdb10(READ_10, 0, 4), {}, 3 * 512), ILLEGAL_REQUEST,
		      ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(f.store.history().empty());
}

TEST_CASE("order: the parameter list is checked whole before it is applied", "[order]")
{
	lu_fixture f;
	// UNMAP: a valid descriptor, then one past the end: nothing is unmapped.
	std::vector<uint8_t> list(40, 0);
	put_be16(list, 0, 38);
	put_be16(list, 2, 32);
	put_be64(list, 8, 0);
	put_be32(list, 16, 8);
	put_be64(list, 24, 1020);
	put_be32(list, 32, 8);
	require_sense(f.run({UNMAP, 0, 0, 0, 0, 0, 0, 0, 40, 0}, list), ILLEGAL_REQUEST,
		      ASC_LBA_OUT_OF_RANGE);
	CHECK(f.store.history().empty());
}
