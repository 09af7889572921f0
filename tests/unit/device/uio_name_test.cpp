// SPDX-License-Identifier: GPL-2.0-or-later
// Parsing tcm-user/<hba>/<devname>/<subtype>/<cfgstring>.
#include <catch2/catch.hpp>

#include "device/uio_name.h"

using tcmud::parse_uio_name;

TEST_CASE("a full uio name splits at the first three slashes only")
{
	auto n = parse_uio_name("tcm-user/1/disk0/file//var/lib/disk.img");
	REQUIRE(n);
	CHECK(n->hba == 1);
	CHECK(n->device == "disk0");
	CHECK(n->subtype == "file");
	CHECK(n->cfgstring == "/var/lib/disk.img");
}

TEST_CASE("a device without dev_config has an empty subtype and cfgstring")
{
	auto n = parse_uio_name("tcm-user/3/disk1");
	REQUIRE(n);
	CHECK(n->hba == 3);
	CHECK(n->device == "disk1");
	CHECK(n->subtype.empty());
	CHECK(n->cfgstring.empty());
}

TEST_CASE("a dev_config without a slash is all subtype")
{
	auto n = parse_uio_name("tcm-user/2/d/rbd");
	REQUIRE(n);
	CHECK(n->subtype == "rbd");
	CHECK(n->cfgstring.empty());
}

TEST_CASE("names of other uio drivers are not tcm-user names")
{
	CHECK_FALSE(parse_uio_name("uio_pdrv_genirq"));
	CHECK_FALSE(parse_uio_name("tcm-user"));
	CHECK_FALSE(parse_uio_name("tcm-userx/1/d/file/x"));
}

TEST_CASE("an hba that is not a 32-bit number is refused")
{
	CHECK_FALSE(parse_uio_name("tcm-user/x/d/file/a"));
	CHECK_FALSE(parse_uio_name("tcm-user//d/file/a"));
	CHECK_FALSE(parse_uio_name("tcm-user/99999999999/d/file/a"));
	CHECK_FALSE(parse_uio_name("tcm-user/-1/d/file/a"));
}

TEST_CASE("a device name that could leave its configfs directory is refused")
{
	CHECK_FALSE(parse_uio_name("tcm-user/1//file/a"));
	CHECK_FALSE(parse_uio_name("tcm-user/1/../file/a"));
	CHECK_FALSE(parse_uio_name("tcm-user/1/./file/a"));
	CHECK_FALSE(parse_uio_name("tcm-user/1"));
}

TEST_CASE("a queue uio name gives hba, device and queue")
{
	auto n = tcmud::parse_queue_uio_name("tcmu-queue/4/disk2/3");
	REQUIRE(n);
	CHECK(n->hba == 4);
	CHECK(n->device == "disk2");
	CHECK(n->queue == 3);
	// Not a tcm-user name: daemons that look for those ignore it.
	CHECK_FALSE(parse_uio_name("tcmu-queue/4/disk2/3"));
}

TEST_CASE("queue uio names that are not exactly tcmu-queue/<hba>/<dev>/<q>, q >= 1, are refused")
{
	for (const char *bad : {"tcmu-queue/4/disk2/0", "tcmu-queue/4/disk2", "tcmu-queue/4/disk2/",
				"tcmu-queue/4/disk2/1/2", "tcmu-queue/x/disk2/1", "tcmu-queue/4/../1",
				"tcmu-queue/4/disk2/1x", "tcm-user/4/disk2/1", "tcmu-queue//disk2/1"}) {
		INFO(bad);
		CHECK_FALSE(tcmud::parse_queue_uio_name(bad));
	}
}
