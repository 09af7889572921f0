// SPDX-License-Identifier: GPL-2.0-or-later
// REPORT SUPPORTED OPERATION CODES, and that it matches what dispatch accepts.
#include <catch2/catch.hpp>

#include "byte_order.h"
#include "opcode_table.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;

namespace {

std::vector<uint8_t> rsoc(uint8_t options, uint8_t opcode = 0, uint16_t sa = 0, uint32_t alloc = 4096)
{
	std::vector<uint8_t> c(12);
	c[0] = MAINTENANCE_IN;
	c[1] = MI_REPORT_SUPPORTED_OPERATION_CODES;
	c[2] = options;
	c[3] = opcode;
	put_be16(c, 4, sa);
	put_be32(c, 6, alloc);
	return c;
}

bool lists(const std::vector<uint8_t> &d, std::size_t step, uint8_t opcode, uint16_t sa)
{
	for (std::size_t at = 4; at + 8 <= d.size(); at += step)
		if (d[at] == opcode && get_be16(d, at + 2) == sa)
			return true;
	return false;
}

// One ALUA group, so that REPORT TARGET PORT GROUPS is offered too.
void with_alua(logical_unit_config &c)
{
	c.port_groups = [] {
		target_port_groups t;
		t.groups.push_back({.id = 1, .relative_ports = {1}});
		t.tpgs = TPGS_IMPLICIT;
		return t;
	};
}

} // namespace

TEST_CASE("REPORT SUPPORTED OPERATION CODES lists every command in 8-byte descriptors", "[rsoc]")
{
	lu_fixture f(with_alua);
	auto r = f.run(rsoc(0), {}, 4096);
	require_good(r);
	std::size_t n = opcode_table().size();
	REQUIRE(get_be32(r.data_in, 0) == n * 8);
	CHECK(lists(r.data_in, 8, READ_16, 0));
	CHECK(lists(r.data_in, 8, COMPARE_AND_WRITE, 0));
	CHECK(lists(r.data_in, 8, UNMAP, 0));
	CHECK(lists(r.data_in, 8, SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16));
	CHECK(lists(r.data_in, 8, MAINTENANCE_IN, MI_REPORT_TARGET_PORT_GROUPS));
	CHECK_FALSE(lists(r.data_in, 8, 0x7f, 0));
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES leaves out UNMAP without discard", "[rsoc]")
{
	lu_fixture f([](logical_unit_config &c) {
		with_alua(c);
		c.caps.discard = false;
	});
	auto r = f.run(rsoc(0), {}, 4096);
	require_good(r);
	CHECK(get_be32(r.data_in, 0) == (opcode_table().size() - 1) * 8);
	CHECK_FALSE(lists(r.data_in, 8, UNMAP, 0));
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES leaves out RTPG without ALUA groups", "[rsoc]")
{
	lu_fixture f;
	auto r = f.run(rsoc(0), {}, 4096);
	require_good(r);
	CHECK(get_be32(r.data_in, 0) == (opcode_table().size() - 1) * 8);
	CHECK_FALSE(lists(r.data_in, 8, MAINTENANCE_IN, MI_REPORT_TARGET_PORT_GROUPS));
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES with RCTD adds timeouts descriptors", "[rsoc]")
{
	lu_fixture f(with_alua);
	auto r = f.run(rsoc(0x80), {}, 4096);
	require_good(r);
	REQUIRE(get_be32(r.data_in, 0) == opcode_table().size() * 20);
	CHECK((r.data_in[4 + 5] & 0x02) != 0);  // CTDP
	CHECK(get_be16(r.data_in, 4 + 8) == 0x0a);
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES for one opcode returns its usage bitmap", "[rsoc]")
{
	lu_fixture f;
	auto r = f.run(rsoc(1, WRITE_10), {}, 4096);
	require_good(r);
	REQUIRE(r.read_len == 4 + 10);
	CHECK((r.data_in[1] & 0x07) == 0x3);
	CHECK(get_be16(r.data_in, 2) == 10);
	CHECK(r.data_in[4] == WRITE_10);
	CHECK(r.data_in[5] == 0x1a);  // DPO, FUA, FUA_NV; no WRPROTECT
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES says not supported for an unknown opcode", "[rsoc]")
{
	lu_fixture f;
	auto r = f.run(rsoc(1, 0x7f), {}, 4096);
	require_good(r);
	REQUIRE(r.read_len == 4);
	CHECK((r.data_in[1] & 0x07) == 0x1);
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES finds a command by service action", "[rsoc]")
{
	lu_fixture f;
	auto r = f.run(rsoc(2, SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16), {}, 4096);
	require_good(r);
	CHECK((r.data_in[1] & 0x07) == 0x3);
	CHECK(get_be16(r.data_in, 2) == 16);
	CHECK(r.data_in[5] == 0x1f);
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES option 3 ignores the service action of plain opcodes", "[rsoc]")
{
	lu_fixture f;
	auto r = f.run(rsoc(3, READ_10, 0x55), {}, 4096);
	require_good(r);
	CHECK((r.data_in[1] & 0x07) == 0x3);
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES option 1 for an opcode with service actions is invalid", "[rsoc]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(rsoc(1, SERVICE_ACTION_IN_16), {}, 4096), 3);
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES option 2 for a plain opcode is invalid", "[rsoc]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(rsoc(2, READ_10), {}, 4096), 4);
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES with a reserved reporting option is invalid", "[rsoc]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(rsoc(5), {}, 4096), 2, 2);
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES stops at the allocation length", "[rsoc]")
{
	lu_fixture f;
	auto r = f.run(rsoc(0, 0, 0, 10), {}, 4096);
	require_good(r);
	CHECK(r.read_len == 10);
}

TEST_CASE("every CDB bit outside a command's reported usage is an invalid field", "[rsoc]")
{
	lu_fixture f(with_alua);
	for (const opcode_info &info : opcode_table()) {
		for (uint16_t byte = 1; byte < info.cdb_length; byte++) {
			for (int bit = 0; bit < 8; bit++) {
				if (info.usage[byte] & (1 << bit))
					continue;
				std::vector<uint8_t> cdb(info.cdb_length);
				cdb[0] = info.opcode;
				if (info.has_service_action)
					cdb[1] = static_cast<uint8_t>(info.service_action);
				cdb[byte] = static_cast<uint8_t>(cdb[byte] | (1 << bit));
				INFO("opcode " << int(info.opcode) << " byte " << byte << " bit " << bit);
				require_invalid_cdb(f.run(cdb), byte, bit);
			}
		}
	}
	CHECK(f.store.history().empty());
}
