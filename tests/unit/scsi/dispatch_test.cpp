// SPDX-License-Identifier: GPL-2.0-or-later
// Dispatch and the commands with no backstore I/O: unknown opcodes, the
// reserved-bit check, TEST UNIT READY, REQUEST SENSE, START STOP UNIT,
// logical_unit::create() and the choice of sense format.
#include <catch2/catch.hpp>

#include "opcode_table.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;

TEST_CASE("an unknown opcode is INVALID COMMAND OPERATION CODE", "[dispatch]")
{
	lu_fixture f;
	auto r = f.run({0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
}

TEST_CASE("an empty CDB is INVALID COMMAND OPERATION CODE", "[dispatch]")
{
	lu_fixture f;
	auto r = f.run({});
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
}

TEST_CASE("a CDB shorter than its opcode needs is refused", "[dispatch]")
{
	lu_fixture f;
	auto r = f.run({READ_16, 0, 0, 0, 0, 0});
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
}

TEST_CASE("UNMAP is an invalid opcode when the backstore cannot discard", "[dispatch]")
{
	lu_fixture f([](logical_unit_config &c) { c.caps.discard = false; });
	auto r = f.run(cdb10(UNMAP, 0, 24));
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
}

TEST_CASE("RDPROTECT set in READ(10) is an invalid field with its bit pointer", "[dispatch]")
{
	lu_fixture f;
	auto r = f.run(cdb10(READ_10, 0, 1, 0x20), {}, 512);
	require_invalid_cdb(r, 1, 5);
	CHECK(f.store.history().empty());
}

TEST_CASE("NACA in the CONTROL byte is an invalid field", "[dispatch]")
{
	lu_fixture f;
	auto cdb = cdb10(READ_10, 0, 1);
	cdb[9] = 0x04;
	require_invalid_cdb(f.run(cdb, {}, 512), 9, 2);
}

// The check reads the CDB and the usage data as two 64-bit words; every
// byte of both words must count, and none past the row's CDB length.
TEST_CASE("every bit outside a row's usage data is an invalid field pointing at it",
	  "[dispatch]")
{
	lu_fixture f;
	size_t checked = 0;
	for (const opcode_info &info : opcode_table()) {
		if (info.available && !info.available(*f.lu))
			continue;
		for (uint16_t i = 1; i < info.cdb_length; i++) {
			for (int bit = 0; bit < 8; bit++) {
				if (info.usage[i] & (1u << bit))
					continue;
				std::vector<uint8_t> cdb(info.cdb_length, 0);
				cdb[0] = info.opcode;
				if (info.has_service_action)
					cdb[1] = uint8_t(info.service_action);
				cdb[i] |= uint8_t(1u << bit);
				INFO("opcode " << int(info.opcode) << " sa " << info.service_action
					       << " byte " << i << " bit " << bit);
				require_invalid_cdb(f.run(cdb, {}, 512), i, bit);
				checked++;
			}
		}
	}
	CHECK(checked > 500);
	CHECK(f.store.history().empty());
}

TEST_CASE("bytes a longer CDB left in a reused command are not checked", "[dispatch]")
{
	lu_fixture f;
	data_buffer buf(std::vector<uint8_t>(512, 0));
	command cmd;
	std::vector<uint8_t> long_cdb(16, 0xff);
	long_cdb[0] = READ_16;
	cmd.reset(long_cdb, buf.iovs, &f.owner);
	f.lu->execute(cmd, f.store);
	REQUIRE(cmd.status() == SAM_STAT_CHECK_CONDITION);
	cmd.reset(cdb10(READ_10, 0, 1), buf.iovs, &f.owner);
	f.lu->execute(cmd, f.store);
	CHECK(cmd.status() == SAM_STAT_GOOD);
}

TEST_CASE("a reserved byte set in TEST UNIT READY is an invalid field", "[dispatch]")
{
	lu_fixture f;
	require_invalid_cdb(f.run({TEST_UNIT_READY, 0, 0, 0x81, 0, 0}), 3, 7);
}

TEST_CASE("an unknown service action of SERVICE ACTION IN(16) points at byte 1", "[dispatch]")
{
	lu_fixture f;
	auto cdb = read_capacity_16_cdb();
	cdb[1] = 0x11;
	require_invalid_cdb(f.run(cdb, {}, 32), 1, 4);
}

TEST_CASE("TEST UNIT READY is GOOD", "[dispatch]")
{
	lu_fixture f;
	require_good(f.run({TEST_UNIT_READY, 0, 0, 0, 0, 0}));
}

TEST_CASE("REQUEST SENSE returns NO SENSE in fixed format", "[dispatch]")
{
	lu_fixture f;
	auto r = f.run({REQUEST_SENSE, 0, 0, 0, 252, 0}, {}, 252);
	require_good(r);
	REQUIRE(r.read_len == 18);
	auto s = decode_sense(r.data_in);
	CHECK_FALSE(s.descriptor);
	CHECK(s.key == NO_SENSE);
	CHECK(s.asc == 0);
}

TEST_CASE("REQUEST SENSE with DESC returns descriptor format", "[dispatch]")
{
	lu_fixture f;
	auto r = f.run({REQUEST_SENSE, 1, 0, 0, 252, 0}, {}, 252);
	require_good(r);
	REQUIRE(r.read_len == 8);
	CHECK(decode_sense(r.data_in).descriptor);
}

TEST_CASE("REQUEST SENSE stops at its allocation length", "[dispatch]")
{
	lu_fixture f;
	auto r = f.run({REQUEST_SENSE, 0, 0, 0, 4, 0}, {}, 252);
	require_good(r);
	CHECK(r.read_len == 4);
}

TEST_CASE("START STOP UNIT start and stop are GOOD", "[dispatch]")
{
	lu_fixture f;
	require_good(f.run({START_STOP_UNIT, 1, 0, 0, 0x01, 0}));
	require_good(f.run({START_STOP_UNIT, 0, 0, 0, 0x00, 0}));
}

TEST_CASE("START STOP UNIT with a POWER CONDITION is an invalid field", "[dispatch]")
{
	lu_fixture f;
	require_invalid_cdb(f.run({START_STOP_UNIT, 0, 0, 0, 0x20, 0}), 4, 7);
}

TEST_CASE("create() refuses a block size that is not a power of two", "[dispatch]")
{
	logical_unit_config cfg;
	cfg.block_size = 1000;
	cfg.num_blocks = 8;
	auto lu = logical_unit::create(cfg);
	REQUIRE_FALSE(lu.ok());
	CHECK(lu.error().error == EINVAL);
	CHECK_FALSE(lu.error().message.empty());
}

TEST_CASE("create() refuses a unit without blocks", "[dispatch]")
{
	logical_unit_config cfg;
	CHECK_FALSE(logical_unit::create(cfg).ok());
}

TEST_CASE("errors use descriptor sense once D_SENSE is on", "[dispatch]")
{
	lu_fixture f;
	f.lu->set_descriptor_sense(true);
	auto r = f.run({0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
	CHECK(r.sense.descriptor);
	CHECK(r.sense_bytes[0] == 0x72);
}

TEST_CASE("a command slot can be reused for the next command", "[dispatch]")
{
	lu_fixture f;
	command cmd;
	std::vector<uint8_t> bad{0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	std::vector<uint8_t> tur{TEST_UNIT_READY, 0, 0, 0, 0, 0};
	cmd.reset(bad, {}, &f.owner);
	f.lu->execute(cmd, f.store);
	REQUIRE(cmd.status() == SAM_STAT_CHECK_CONDITION);
	cmd.reset(tur, {}, &f.owner);
	f.lu->execute(cmd, f.store);
	CHECK(cmd.status() == SAM_STAT_GOOD);
	CHECK(cmd.sense().empty());
	CHECK(f.owner.done == 2);
}

TEST_CASE("the one-load opcode rows agree with find_opcode", "[dispatch]")
{
	size_t plain = 0;
	for (unsigned op = 0; op < 256; op++) {
		bool bad_sa = false;
		const opcode_info *found = find_opcode(uint8_t(op), 0, &bad_sa);
		const opcode_info *row = plain_opcode_rows[op];
		if (row) {
			// A plain row is the opcode's only one, whatever byte 1 says.
			CHECK(row == found);
			CHECK(!row->has_service_action);
			CHECK(find_opcode(uint8_t(op), 0x1f, &bad_sa) == row);
			plain++;
		} else if (found) {
			// Left to find_opcode: rows chosen by service action.
			CHECK(opcode_has_service_action(uint8_t(op)));
		}
	}
	CHECK(plain_opcode_rows[READ_10] != nullptr);
	CHECK(plain_opcode_rows[WRITE_16] != nullptr);
	CHECK(plain_opcode_rows[SERVICE_ACTION_IN_16] == nullptr);
	CHECK(plain > 20);
}
