// SPDX-License-Identifier: GPL-2.0-or-later
// ALUA as INQUIRY and REPORT TARGET PORT GROUPS report it (SPC-5 6.7,
// 7.7.6, 6.37), and the lock owner's group on top of configfs's states.
#include <catch2/catch.hpp>

#include "byte_order.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;

namespace {

// ceph-iscsi's implicit layout on gateway 1: its own group "ao" (id 1,
// port 1, enabled here) and gateway 2's "ano2" (id 2, port 2).
target_port_groups two_gateways()
{
	target_port_groups t;
	t.groups.push_back({.id = 1, .state = alua_state::active_optimized,
			    .supported = alua_support::OPTIMIZED | alua_support::NON_OPTIMIZED |
					 alua_support::TRANSITIONING,
			    .preferred = true, .status = 0, .relative_ports = {1}});
	t.groups.push_back({.id = 2, .state = alua_state::active_non_optimized,
			    .supported = alua_support::OPTIMIZED | alua_support::NON_OPTIMIZED |
					 alua_support::TRANSITIONING,
			    .preferred = false, .status = 0, .relative_ports = {2, 7}});
	t.tpgs = TPGS_IMPLICIT;
	t.have_local_port = true;
	t.local_group = 1;
	t.local_relative_port = 1;
	t.implicit_transition_secs = 45;
	return t;
}

lu_fixture with_groups(target_port_groups t)
{
	return lu_fixture([t](logical_unit_config &c) { c.port_groups = [t] { return t; }; });
}

std::vector<uint8_t> rtpg_cdb(bool extended, uint32_t allocation)
{
	std::vector<uint8_t> cdb(12, 0);
	cdb[0] = 0xa3;
	cdb[1] = static_cast<uint8_t>((extended ? 0x20 : 0) | 0x0a);
	put_be32(cdb, 6, allocation);
	return cdb;
}

} // namespace

TEST_CASE("INQUIRY's TPGS says implicit ALUA only where groups are configured", "[alua]")
{
	auto f = with_groups(two_gateways());
	auto r = f.run(inquiry_cdb(false, 0, 255), {}, 255);
	require_good(r);
	CHECK((r.data_in[5] & 0x30) == 0x10);
	CHECK((r.data_in[5] & 0x08) == 0x08);  // 3PC untouched

	auto none = with_groups({});
	r = none.run(inquiry_cdb(false, 0, 255), {}, 255);
	require_good(r);
	CHECK((r.data_in[5] & 0x30) == 0);
	lu_fixture plain;
	r = plain.run(inquiry_cdb(false, 0, 255), {}, 255);
	CHECK((r.data_in[5] & 0x30) == 0);
}

TEST_CASE("VPD 0x83 names the local relative target port and its group", "[alua]")
{
	auto f = with_groups(two_gateways());
	auto r = f.run(inquiry_cdb(true, 0x83, 512), {}, 512);
	require_good(r);
	bool rtp = false, tpg = false;
	const std::size_t end = 4 + get_be16(r.data_in, 2);
	for (std::size_t at = 4; at + 4 <= end; at += 4 + r.data_in[at + 3]) {
		const uint8_t assoc = (r.data_in[at + 1] >> 4) & 0x3, type = r.data_in[at + 1] & 0xf;
		if (assoc == 1 && type == 4) {
			rtp = true;
			CHECK(r.data_in[at + 3] == 4);
			CHECK(get_be16(r.data_in, at + 6) == 1);
		}
		if (assoc == 1 && type == 5) {
			tpg = true;
			CHECK(get_be16(r.data_in, at + 6) == 1);
		}
	}
	CHECK(rtp);
	CHECK(tpg);

	auto none = with_groups({});
	r = none.run(inquiry_cdb(true, 0x83, 512), {}, 512);
	require_good(r);
	for (std::size_t at = 4; at + 4 <= 4u + get_be16(r.data_in, 2); at += 4 + r.data_in[at + 3])
		CHECK(((r.data_in[at + 1] >> 4) & 0x3) == 0);  // logical unit designators only
}

TEST_CASE("REPORT TARGET PORT GROUPS lists every group with its ports", "[alua]")
{
	auto f = with_groups(two_gateways());
	auto r = f.run(rtpg_cdb(false, 512), {}, 512);
	require_good(r);
	REQUIRE(r.read_len == 4 + 12 + 16);
	CHECK(get_be32(r.data_in, 0) == 28);
	// group 1: PREF, AO; supported T_SUP|AN_SUP|AO_SUP; one port.
	CHECK(r.data_in[4] == 0x80);
	CHECK(r.data_in[5] == 0x83);
	CHECK(get_be16(r.data_in, 6) == 1);
	CHECK(r.data_in[11] == 1);
	CHECK(get_be16(r.data_in, 14) == 1);
	// group 2: ANO, two ports.
	CHECK(r.data_in[16] == 0x01);
	CHECK(get_be16(r.data_in, 18) == 2);
	CHECK(r.data_in[23] == 2);
	CHECK(get_be16(r.data_in, 26) == 2);
	CHECK(get_be16(r.data_in, 30) == 7);
}

TEST_CASE("REPORT TARGET PORT GROUPS in the extended format has the transition time", "[alua]")
{
	auto f = with_groups(two_gateways());
	auto r = f.run(rtpg_cdb(true, 512), {}, 512);
	require_good(r);
	REQUIRE(r.read_len == 8 + 28);
	CHECK(get_be32(r.data_in, 0) == 28);
	CHECK(r.data_in[4] == 0x10);
	CHECK(r.data_in[5] == 45);
	CHECK(get_be16(r.data_in, 10) == 1);
	// Cut at the allocation length, the length field still says all.
	r = f.run(rtpg_cdb(true, 10), {}, 512);
	require_good(r);
	CHECK(r.read_len == 10);
	CHECK(get_be32(r.data_in, 0) == 28);
}

TEST_CASE("REPORT TARGET PORT GROUPS: a reserved format or no ALUA is refused", "[alua]")
{
	auto f = with_groups(two_gateways());
	auto cdb = rtpg_cdb(false, 512);
	cdb[1] |= 0x40;
	require_invalid_cdb(f.run(cdb, {}, 512), 1, 6);

	// Not offered: an unsupported service action (SPC-5 4.5.2.1).
	auto none = with_groups({});
	require_invalid_cdb(none.run(rtpg_cdb(false, 512), {}, 512), 1, 4);
	lu_fixture plain;
	require_invalid_cdb(plain.run(rtpg_cdb(false, 512), {}, 512), 1, 4);
}

TEST_CASE("the lock owner's group is reported active/optimized, the others not", "[alua]")
{
	// Gateway 2 took the lock over: it is AO, gateway 1's "ao" group is
	// now non-optimized, both marked as implicitly altered.
	target_port_groups t = with_lock_owner(two_gateways(), 2);
	CHECK(t.groups[0].state == alua_state::active_non_optimized);
	CHECK(t.groups[0].status == 2);
	CHECK(t.groups[1].state == alua_state::active_optimized);
	CHECK(t.groups[1].status == 2);
	// Unknown owner or no owner: configfs's states as they are.
	for (auto owner : {std::optional<uint16_t>{}, std::optional<uint16_t>{9}}) {
		t = with_lock_owner(two_gateways(), owner);
		CHECK(t.groups[0].state == alua_state::active_optimized);
		CHECK(t.groups[1].state == alua_state::active_non_optimized);
		CHECK(t.groups[0].status == 0);
	}
	// A group configured standby stays standby when it does not own.
	target_port_groups s = two_gateways();
	s.groups[1].state = alua_state::standby;
	t = with_lock_owner(s, 1);
	CHECK(t.groups[1].state == alua_state::standby);
}
