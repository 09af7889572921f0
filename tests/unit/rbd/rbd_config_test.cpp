// SPDX-License-Identifier: GPL-2.0-or-later
// The rbd cfgstring: tcmu-runner's syntax, and clear refusals. No cluster.
#include <catch2/catch.hpp>

#include "rbd/rbd_config.h"

using namespace tcmud;

namespace {

rbd_config parse_ok(const std::string &text)
{
	auto cfg = parse_rbd_config(text);
	INFO(text << ": " << (cfg ? "" : cfg.error().what()));
	REQUIRE(cfg);
	return *cfg;
}

// The refusal's sentence; a syntax error is EINVAL.
std::string parse_bad(const std::string &text)
{
	auto cfg = parse_rbd_config(text);
	INFO(text);
	REQUIRE_FALSE(cfg);
	CHECK(cfg.error().error == EINVAL);
	return cfg.error().message;
}

} // namespace

TEST_CASE("pool/image alone", "[rbd][config]")
{
	rbd_config cfg = parse_ok("rbd/disk0");
	CHECK(cfg.pool == "rbd");
	CHECK(cfg.image == "disk0");
	CHECK(cfg.conf.empty());
	CHECK(cfg.id.empty());
	CHECK(cfg.osd_op_timeout == 0);
}

TEST_CASE("tcmu-runner's options in any order", "[rbd][config]")
{
	rbd_config cfg = parse_ok("pool-a/img.1;osd_op_timeout=45;conf=/etc/ceph/x.conf;id=iscsi");
	CHECK(cfg.pool == "pool-a");
	CHECK(cfg.image == "img.1");
	CHECK(cfg.conf == "/etc/ceph/x.conf");
	CHECK(cfg.id == "iscsi");
	CHECK(cfg.osd_op_timeout == 45);
	cfg = parse_ok("p/i;id=gw;conf=/c");
	CHECK(cfg.id == "gw");
	CHECK(cfg.conf == "/c");
}

TEST_CASE("malformed cfgstrings are refused with the reason", "[rbd][config]")
{
	CHECK_THAT(parse_bad(""), Catch::Contains("not POOL/IMAGE"));
	CHECK_THAT(parse_bad("disk0"), Catch::Contains("not POOL/IMAGE"));
	CHECK_THAT(parse_bad("/disk0"), Catch::Contains("no pool name"));
	CHECK_THAT(parse_bad("rbd/"), Catch::Contains("no image name"));
	CHECK_THAT(parse_bad("rbd/a/b"), Catch::Contains("contains '/'"));
	CHECK_THAT(parse_bad("rbd/img@snap"), Catch::Contains("snapshots"));
	CHECK_THAT(parse_bad("rbd/i;"), Catch::Contains("empty option"));
	CHECK_THAT(parse_bad("rbd/i;;id=a"), Catch::Contains("empty option"));
	CHECK_THAT(parse_bad("rbd/i;conf"), Catch::Contains("no value"));
	CHECK_THAT(parse_bad("rbd/i;conf="), Catch::Contains("empty value"));
	CHECK_THAT(parse_bad("rbd/i;conf=etc/ceph.conf"), Catch::Contains("not absolute"));
	CHECK_THAT(parse_bad("rbd/i;id=client.admin"), Catch::Contains("id=admin"));
	CHECK_THAT(parse_bad("rbd/i;osd_op_timeout=0"), Catch::Contains("between 1 and 3600"));
	CHECK_THAT(parse_bad("rbd/i;osd_op_timeout=5s"), Catch::Contains("between 1 and 3600"));
	CHECK_THAT(parse_bad("rbd/i;osd_op_timeout=-1"), Catch::Contains("between 1 and 3600"));
	CHECK_THAT(parse_bad("rbd/i;id=a;id=b"), Catch::Contains("given twice"));
	// Unknown options are refused, unlike tcmu-runner (docs/rbd.md).
	CHECK_THAT(parse_bad("rbd/i;conf_path=/etc/ceph/ceph.conf"),
		   Catch::Contains("unknown option 'conf_path'"));
	// tcmu-runner's own option, in saved configurations: accepted.
	CHECK(parse_rbd_config("rbd/i;tcmur_cmd_time_out=30;osd_op_timeout=10"));
}

TEST_CASE("check_config also wants a named conf to be readable", "[rbd][config]")
{
	CHECK(check_rbd_config("rbd/disk0"));
	CHECK(check_rbd_config("rbd/disk0;conf=/dev/null"));
	auto missing = check_rbd_config("rbd/disk0;conf=/nonexistent/ceph.conf");
	REQUIRE_FALSE(missing);
	CHECK(missing.error().error == ENOENT);
	CHECK_THAT(missing.error().what(), Catch::Contains("/nonexistent/ceph.conf"));
}

// What ceph-iscsi (rbd-target-api, lun.py) writes for each disk it
// creates: "rbd/<pool>/<image>;osd_op_timeout=<N>", plus ";conf=<path>"
// when its cephconf is not /etc/ceph/ceph.conf. The daemon gets it without
// the "rbd/" handler prefix, as from targetcli.
TEST_CASE("the cfgstrings ceph-iscsi writes", "[rbd][config]")
{
	rbd_config cfg = parse_ok("rbd/disk_1;osd_op_timeout=30");
	CHECK(cfg.pool == "rbd");
	CHECK(cfg.image == "disk_1");
	CHECK(cfg.osd_op_timeout == 30);
	cfg = parse_ok("iscsi-pool/vm.images-01;osd_op_timeout=25;conf=/etc/ceph/site-b.conf");
	CHECK(cfg.pool == "iscsi-pool");
	CHECK(cfg.image == "vm.images-01");
	CHECK(cfg.osd_op_timeout == 25);
	CHECK(cfg.conf == "/etc/ceph/site-b.conf");
}
