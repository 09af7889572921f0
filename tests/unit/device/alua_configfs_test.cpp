// SPDX-License-Identifier: GPL-2.0-or-later
// Reading a device's ALUA target port groups from a configfs tree shaped
// like the kernel's (target_core_configfs.c, target_core_alua.c).
#include "device/alua_configfs.h"

#include "fake_tree.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

const std::string wwn = "iqn.2003-01.com.example.iscsi-gw:ceph-igw";

// One group as LIO shows it: a member line per LUN in it.
void add_group(fake_tree &t, const fs::path &dev, const std::string &name, int id, int state,
	       const std::string &type, const std::string &members, int preferred = 0)
{
	fs::path g = dev / "alua" / name;
	fake_tree::write(g / "tg_pt_gp_id", std::to_string(id) + "\n");
	fake_tree::write(g / "alua_access_state", std::to_string(state) + "\n");
	fake_tree::write(g / "alua_access_type", type + "\n");
	fake_tree::write(g / "alua_access_status", "None\n");
	fake_tree::write(g / "preferred", std::to_string(preferred) + "\n");
	fake_tree::write(g / "implicit_trans_secs", "45\n");
	for (const char *s : {"transitioning", "offline", "lba_dependent", "unavailable", "standby"})
		fake_tree::write(g / (std::string("alua_support_") + s), "0\n");
	fake_tree::write(g / "alua_support_active_nonoptimized", "1\n");
	fake_tree::write(g / "alua_support_active_optimized", "1\n");
	fake_tree::write(g / "members", members);
	(void)t;
}

// The iSCSI TPG tpgt_<tag> with lun_0 (relative port rtpi) and its enable.
void add_port(fake_tree &t, int tag, int rtpi, bool enabled)
{
	fs::path tpg = t.roots.configfs / "target" / "iscsi" / wwn / ("tpgt_" + std::to_string(tag));
	fake_tree::write(tpg / "enable", enabled ? "1\n" : "0\n");
	fake_tree::write(tpg / "lun" / "lun_0" / "statistics" / "scsi_port" / "indx",
			 std::to_string(rtpi) + "\n");
}

} // namespace

TEST_CASE("ALUA groups: ceph-iscsi's implicit layout on gateway 1", "[alua]")
{
	fake_tree t;
	fs::path dev = t.configfs_dir("user_0/disk_1");
	add_group(t, dev, "default_tg_pt_gp", 0, 0, "Implicit and Explicit", "");
	add_group(t, dev, "ao", 1, 0, "Implicit", "iSCSI/" + wwn + "/tpgt_1/lun_0\n", 1);
	// As target_core_configfs.c shows members: "\n\0" after each line.
	add_group(t, dev, "ano2", 2, 1, "Implicit",
		  "iSCSI/" + wwn + "/tpgt_2/lun_0\n" + std::string(1, '\0'));
	add_port(t, 1, 11, true);
	add_port(t, 2, 12, false);

	auto got = read_target_port_groups(dev, t.roots);
	REQUIRE(got);
	REQUIRE(got->groups.size() == 2);
	// Name order: ano2, ao.
	CHECK(got->groups[0].id == 2);
	CHECK(got->groups[0].state == scsi::alua_state::active_non_optimized);
	CHECK(got->groups[0].relative_ports == std::vector<uint16_t>{12});
	CHECK_FALSE(got->groups[0].preferred);
	CHECK(got->groups[1].id == 1);
	CHECK(got->groups[1].state == scsi::alua_state::active_optimized);
	CHECK(got->groups[1].preferred);
	CHECK(got->groups[1].supported ==
	      (scsi::alua_support::OPTIMIZED | scsi::alua_support::NON_OPTIMIZED));
	CHECK(got->have_local_port);
	CHECK(got->local_group == 1);
	CHECK(got->local_relative_port == 11);
	CHECK(got->tpgs == scsi::TPGS_IMPLICIT);
	CHECK(got->implicit_transition_secs == 45);
	CHECK_FALSE(got->explicit_configured);
}

TEST_CASE("ALUA groups: explicit transitions configured are reported implicit, and said",
	  "[alua]")
{
	fake_tree t;
	fs::path dev = t.configfs_dir("user_0/disk_1");
	// ceph-iscsi's explicit layout: "Implicit and Explicit", standby.
	add_group(t, dev, "ao", 1, 2, "Implicit and Explicit", "iSCSI/" + wwn + "/tpgt_1/lun_0\n", 1);
	add_port(t, 1, 11, true);
	auto got = read_target_port_groups(dev, t.roots);
	REQUIRE(got);
	CHECK(got->tpgs == scsi::TPGS_IMPLICIT);
	CHECK(got->explicit_configured);
}

TEST_CASE("ALUA groups: only the kernel's default group is no ALUA", "[alua]")
{
	fake_tree t;
	fs::path dev = t.configfs_dir("user_0/disk_1");
	add_group(t, dev, "default_tg_pt_gp", 0, 0, "Implicit and Explicit",
		  "loopback/naa.5001405aaaaaaaaa/tpgt_1/lun_0\n");
	auto got = read_target_port_groups(dev, t.roots);
	REQUIRE(got);
	CHECK(got->groups.empty());
	CHECK(got->tpgs == 0);
	// No alua/ directory at all: the same.
	auto none = read_target_port_groups(t.configfs_dir("user_0/other"), t.roots);
	REQUIRE(none);
	CHECK(none->groups.empty());
}

TEST_CASE("ALUA groups: a fabric without an enable file (tcm_loop) is enabled", "[alua]")
{
	fake_tree t;
	fs::path dev = t.configfs_dir("user_0/disk_1");
	add_group(t, dev, "local", 7, 0, "Implicit", "loopback/naa.5001405aaaaaaaaa/tpgt_1/lun_3\n");
	fake_tree::write(t.roots.configfs / "target" / "loopback" / "naa.5001405aaaaaaaaa" / "tpgt_1" /
				 "lun" / "lun_3" / "statistics" / "scsi_port" / "indx",
			 "3\n");
	auto got = read_target_port_groups(dev, t.roots);
	REQUIRE(got);
	REQUIRE(got->groups.size() == 1);
	CHECK(got->have_local_port);
	CHECK(got->local_group == 7);
	CHECK(got->local_relative_port == 3);
}

TEST_CASE("ALUA groups: a member that would leave configfs is refused", "[alua]")
{
	fake_tree t;
	fs::path dev = t.configfs_dir("user_0/disk_1");
	for (const char *bad : {"iSCSI/../../../etc/tpgt_1/lun_0\n", "iSCSI/x/tpgt_1\n",
				"iSCSI/x/y/tpgt_1/lun_0\n", "iSCSI/x/tpgt_1/notalun\n"}) {
		add_group(t, dev, "g", 3, 0, "Implicit", bad);
		auto got = read_target_port_groups(dev, t.roots);
		INFO(bad);
		REQUIRE_FALSE(got);
		CHECK(got.error().error == EINVAL);
	}
}
