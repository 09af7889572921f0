// SPDX-License-Identifier: GPL-2.0-or-later
// File access to a fake TCMU configfs device directory.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>

#include "device/tcmu_configfs.h"
#include "fake_tree.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

struct configfs_device {
	fake_tree t;
	fs::path dir = t.configfs_dir("user_7") / "disk0";
	tcmu_configfs cfg{t.roots, 7, "disk0"};

	configfs_device()
	{
		fake_tree::write(dir / "attrib" / "hw_block_size", "4096\n");
		fake_tree::write(dir / "attrib" / "hw_max_sectors", "2048\n");
		fake_tree::write(dir / "attrib" / "dev_size", "1073741824\n");
		fake_tree::write(dir / "attrib" / "emulate_write_cache", "1\n");
		fake_tree::write(dir / "info", "Status: ACTIVATED  Max Queue Depth: 128\n");
		fake_tree::write(dir / "wwn" / "vpd_unit_serial",
				 "T10 VPD Unit Serial Number: 6001405abcdef\n");
		fake_tree::write(dir / "action" / "block_dev", "");
		fake_tree::write(dir / "action" / "reset_ring", "");
	}
};

} // namespace

TEST_CASE("the configfs directory is target/core/user_<hba>/<device>")
{
	configfs_device d;
	CHECK(d.cfg.dir() == d.dir);
}

TEST_CASE("block size, size and write cache are read from attrib/")
{
	configfs_device d;
	auto bs = d.cfg.hw_block_size();
	auto size = d.cfg.dev_size();
	auto wce = d.cfg.emulate_write_cache();
	REQUIRE(bs);
	REQUIRE(size);
	REQUIRE(wce);
	CHECK(*bs == 4096);
	CHECK(*size == 1073741824);
	CHECK(*wce);
}

TEST_CASE("a block size that does not fit 32 bits is ERANGE")
{
	configfs_device d;
	fake_tree::write(d.dir / "attrib" / "hw_block_size", "4294967296\n");
	auto bs = d.cfg.hw_block_size();
	REQUIRE_FALSE(bs);
	CHECK(bs.error().error == ERANGE);
}

TEST_CASE("a missing attribute's error names its path and the errno text")
{
	configfs_device d;
	fs::remove(d.dir / "attrib" / "dev_size");
	auto size = d.cfg.dev_size();
	REQUIRE_FALSE(size);
	CHECK(size.error().error == ENOENT);
	CHECK(size.error().what() == "cannot open " + (d.dir / "attrib" / "dev_size").string() +
					     ": " + std::strerror(ENOENT));
}

TEST_CASE("the unit serial comes without the kernel's label")
{
	configfs_device d;
	auto serial = d.cfg.unit_serial();
	REQUIRE(serial);
	CHECK(*serial == "6001405abcdef");
}

TEST_CASE("info is read as text")
{
	configfs_device d;
	auto info = d.cfg.info();
	REQUIRE(info);
	CHECK(*info == "Status: ACTIVATED  Max Queue Depth: 128");
}

TEST_CASE("block_dev writes 1 to block and 0 to unblock")
{
	configfs_device d;
	REQUIRE(d.cfg.block_dev());
	CHECK(fake_tree::read(d.dir / "action" / "block_dev") == "1");
	REQUIRE(d.cfg.unblock_dev());
	CHECK(fake_tree::read(d.dir / "action" / "block_dev") == "0");
}

TEST_CASE("reset_ring writes the level the kernel expects")
{
	configfs_device d;
	REQUIRE(d.cfg.reset_ring(ring_reset_level::busy));
	CHECK(fake_tree::read(d.dir / "action" / "reset_ring") == "1");
	REQUIRE(d.cfg.reset_ring(ring_reset_level::check_condition));
	CHECK(fake_tree::read(d.dir / "action" / "reset_ring") == "2");
}

TEST_CASE("attribute names that are not one path component are refused")
{
	configfs_device d;
	CHECK(d.cfg.read_attrib("../info").error().error == EINVAL);
	CHECK(d.cfg.read_attrib("..").error().error == EINVAL);
	CHECK(d.cfg.read_wwn("").error().error == EINVAL);
}

TEST_CASE("a device name that is not one path component is refused")
{
	fake_tree t;
	tcmu_configfs cfg(t.roots, 1, "..");
	CHECK(cfg.info().error().error == EINVAL);
	CHECK(cfg.block_dev().error().error == EINVAL);
	CHECK(cfg.unblock_dev().error().error == EINVAL);
	CHECK(cfg.reset_ring(ring_reset_level::busy).error().error == EINVAL);
}

TEST_CASE("enable and the LIO device index (the netlink device id) are read")
{
	configfs_device d;
	fake_tree::write(d.dir / "enable", "0\n");
	fake_tree::write(d.dir / "statistics" / "scsi_dev" / "indx", "42\n");
	auto on = d.cfg.enabled();
	REQUIRE(on);
	CHECK_FALSE(*on);
	auto index = d.cfg.device_index();
	REQUIRE(index);
	CHECK(*index == 42);
	fake_tree::write(d.dir / "enable", "1\n");
	on = d.cfg.enabled();
	REQUIRE(on);
	CHECK(*on);
}

TEST_CASE("a missing enable or index file is an error, not a default")
{
	configfs_device d;
	auto on = d.cfg.enabled();
	auto index = d.cfg.device_index();
	REQUIRE_FALSE(on);
	REQUIRE_FALSE(index);
	CHECK(on.error().error == ENOENT);
	CHECK(index.error().error == ENOENT);
}
