// SPDX-License-Identifier: GPL-2.0-or-later
// tcmud.conf copy_groups: which devices EXTENDED COPY may join.
#include <catch2/catch.hpp>

#include "config/copy_groups.h"
#include "config/daemon_config.h"

using namespace tcmud;

TEST_CASE("copy_groups joins exactly the devices one group names", "[config][copy_groups]")
{
	auto g = parse_copy_groups("vmfs: disk0 disk1; backup: user_3/disk2 disk3");
	REQUIRE(g);
	CHECK(g->share_group(0, "disk0", 5, "disk1"));
	CHECK(g->share_group(5, "disk1", 0, "disk0"));
	CHECK(g->share_group(3, "disk2", 9, "disk3"));
	// user_3/disk2 is that HBA's disk2 only.
	CHECK_FALSE(g->share_group(4, "disk2", 9, "disk3"));
	// Across groups, and devices no group names.
	CHECK_FALSE(g->share_group(0, "disk0", 9, "disk3"));
	CHECK_FALSE(g->share_group(0, "disk0", 0, "disk9"));
	CHECK_FALSE(g->share_group(0, "disk9", 0, "disk8"));
	// A name that merely starts or ends like a member is not one.
	CHECK_FALSE(g->share_group(0, "disk0", 0, "disk10"));
	CHECK_FALSE(g->share_group(3, "isk2", 9, "disk3"));
	CHECK(to_string(*g) == "vmfs: disk0 disk1; backup: user_3/disk2 disk3");
}

TEST_CASE("copy_groups none and bad groups", "[config][copy_groups]")
{
	auto none = parse_copy_groups("none");
	REQUIRE(none);
	CHECK(none->groups.empty());
	CHECK_FALSE(none->share_group(0, "a", 0, "b"));
	CHECK(to_string(*none) == "none");
	for (const char *bad : {"", "disk0 disk1", "g: disk0", "g: a b; g: c d", ": a b",
				"g: a ../b", "g: a \"b", "g: a#b c", "g: user_x/a b", "g: user_/a b",
				"g: a/b c", "g h: a b"}) {
		INFO(bad);
		CHECK_FALSE(parse_copy_groups(bad));
	}
}

TEST_CASE("tcmud.conf copy_groups", "[config][copy_groups]")
{
	daemon_config cfg;
	std::vector<std::string> errors;
	REQUIRE(parse_tcmud_conf("copy_groups = \"g: a b\"\n", "t.conf", &cfg, &errors));
	REQUIRE(cfg.copy_groups);
	CHECK(cfg.copy_groups->share_group(0, "a", 1, "b"));
	daemon_config bad;
	CHECK_FALSE(parse_tcmud_conf("copy_groups = g: a\n", "t.conf", &bad, &errors));
	REQUIRE_FALSE(errors.empty());
	CHECK(errors.back().find("copy_groups") != std::string::npos);
}
