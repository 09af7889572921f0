// SPDX-License-Identifier: GPL-2.0-or-later
// Finding TCMU devices in a fake /sys/class/uio.
#include <catch2/catch.hpp>

#include <cerrno>

#include "device/uio_discovery.h"
#include "fake_tree.h"

using namespace tcmud;
using namespace tcmud::test;

TEST_CASE("discovery lists tcm-user devices by minor and ignores other uio drivers")
{
	fake_tree t;
	t.add_uio("uio0", "uio_pdrv_genirq");
	t.add_uio("uio3", "tcm-user/1/disk3/file//srv/d3.img", "0x0000000040800000\n");
	t.add_uio("uio1", "tcm-user/2/disk1/file//srv/d1.img");

	auto found = discover_tcmu_devices(t.roots);
	REQUIRE(found.size() == 2);
	CHECK(found[0].uio == "uio1");
	CHECK(found[0].minor == 1);
	CHECK(found[0].name.hba == 2);
	CHECK(found[1].uio == "uio3");
	CHECK(found[1].name.device == "disk3");
	CHECK(found[1].name.cfgstring == "/srv/d3.img");
	CHECK(found[1].map_size == 0x40800000);
	CHECK(found[1].version == "2");
}

TEST_CASE("discovery without a uio class directory finds nothing")
{
	fake_tree t;
	CHECK(discover_tcmu_devices(t.roots).empty());
}

TEST_CASE("a tcm-user device whose map0 cannot be read is skipped with its error")
{
	fake_tree t;
	t.add_uio("uio1", "tcm-user/1/good/file/x");
	fake_tree::write(t.uio_dir("uio2") / "name", "tcm-user/1/gone/file/x\n");
	fake_tree::write(t.uio_dir("uio2") / "version", "2\n");

	std::vector<discovery_skip> skipped;
	auto found = discover_tcmu_devices(t.roots, &skipped);
	REQUIRE(found.size() == 1);
	CHECK(found[0].name.device == "good");
	REQUIRE(skipped.size() == 1);
	CHECK(skipped[0].uio == "uio2");
	CHECK(skipped[0].error.error == ENOENT);
	CHECK(skipped[0].error.message ==
	      "cannot open " + (t.uio_dir("uio2") / "maps" / "map0" / "size").string());
}

TEST_CASE("a map0 size that is not a number makes the device unreadable")
{
	fake_tree t;
	t.add_uio("uio4", "tcm-user/1/d/file/x", "lots\n");
	CHECK(read_uio_device(t.roots, "uio4").error().error == EINVAL);
}

TEST_CASE("a map0 of size zero makes the device unreadable")
{
	fake_tree t;
	t.add_uio("uio4", "tcm-user/1/d/file/x", "0x0\n");
	CHECK(read_uio_device(t.roots, "uio4").error().error == EINVAL);
}

TEST_CASE("reading a uio device of another driver is -ENODEV")
{
	fake_tree t;
	t.add_uio("uio0", "uio_pdrv_genirq");
	CHECK(read_uio_device(t.roots, "uio0").error().error == ENODEV);
}

TEST_CASE("a directory entry not named uioN is not a device")
{
	fake_tree t;
	t.add_uio("uiox", "tcm-user/1/d/file/x");
	CHECK(read_uio_device(t.roots, "uiox").error().error == ENODEV);
	CHECK(discover_tcmu_devices(t.roots).empty());
}

TEST_CASE("a queue's uio device is found by hba, device and queue; discovery does not list it")
{
	fake_tree t;
	t.add_uio("uio2", "tcm-user/1/disk/file//srv/d.img");
	t.add_uio("uio3", "tcmu-queue/1/disk/1", "0x0000000000410000\n");
	t.add_uio("uio4", "tcmu-queue/1/disk/2");
	t.add_uio("uio5", "tcmu-queue/2/disk/3");  // another hba
	t.add_uio("uio6", "tcmu-queue/1/disk9/3"); // another device
	auto devs = discover_tcmu_devices(t.roots);
	REQUIRE(devs.size() == 1);

	auto q = find_queue_uio_device(t.roots, devs[0], 1);
	REQUIRE(q);
	CHECK(q->uio == "uio3");
	CHECK(q->minor == 3);
	CHECK(q->map_size == 0x410000);
	CHECK(q->name.device == "disk");
	q = find_queue_uio_device(t.roots, devs[0], 2);
	REQUIRE(q);
	CHECK(q->uio == "uio4");
	CHECK(find_queue_uio_device(t.roots, devs[0], 3).error().error == ENOENT);
}
