// SPDX-License-Identifier: GPL-2.0-or-later
// tcmu_device finding the queues of a multi-queue device (docs/kmod.md): the
// count from queue 0's mailbox (TCMU_MAILBOX_FLAG_CAP_MQ + tcmu_mq_mailbox),
// queues 1..N-1 as uio devices named tcmu-queue/<hba>/<dev>/<q>, each checked
// to be the queue it claims. A fake sysfs/configfs//dev tree; the "uio
// devices" are plain files holding mailboxes the kernel model wrote.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/tcmu_device.h"
#include "fake_tree.h"
#include "kernel_mq_model.h"
#include "kernel_ring_model.h"
#include "log/log.h"
#include "ring/tcmu_abi.h"
#include "worker_rig.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

constexpr uint32_t block = 512;
constexpr uint64_t blocks = 2048;

std::string bytes_of(std::span<const std::byte> map)
{
	return std::string(reinterpret_cast<const char *>(map.data()), map.size());
}

struct mq_tree {
	fake_tree t;
	scratch_unit unit{block, blocks}; // only its backing file is used
	kernel_mq_model model;

	explicit mq_tree(unsigned n) : model(n)
	{
		// tcmu_device opens the file itself, and one backing file has
		// one writer (file/backing_lock.h): the scratch unit's own
		// open lets go.
		unit.lu.reset();
		unit.store.reset();
		fs::path dir = t.configfs_dir("user_1") / "disk";
		fake_tree::write(dir / "attrib" / "hw_block_size", "512\n");
		fake_tree::write(dir / "attrib" / "hw_max_sectors", "128\n");
		fake_tree::write(dir / "attrib" / "dev_size", std::to_string(block * blocks) + "\n");
		fake_tree::write(dir / "attrib" / "emulate_write_cache", "0\n");
		add_queue(2, "tcm-user/1/disk/file/" + unit.file.string(), 0);
	}

	// Queue q's ring as /dev/uio<minor>, named `name` in sysfs.
	void add_queue(unsigned minor, const std::string &name, unsigned q)
	{
		std::string uio = "uio" + std::to_string(minor);
		std::string content = bytes_of(model.ring(q).mapping());
		char size[32];
		std::snprintf(size, sizeof(size), "0x%zx\n", content.size());
		t.add_uio(uio, name, size);
		fake_tree::write(t.roots.dev / uio, content);
	}

	setup_result<std::unique_ptr<tcmu_device>> open()
	{
		auto info = read_uio_device(t.roots, "uio2");
		REQUIRE(info);
		return tcmu_device::open(t.roots, *info, device_options{}, ring_origin::fresh);
	}
};

} // namespace

TEST_CASE("a device whose queue 0 mailbox says 3 queues is served by 3 workers on 3 uio devices")
{
	set_log_level(log_level::error);
	mq_tree m(3);
	m.add_queue(7, "tcmu-queue/1/disk/2", 2);
	m.add_queue(5, "tcmu-queue/1/disk/1", 1);
	m.add_queue(6, "tcmu-queue/1/other/1", 1); // another device's queue
	auto dev = m.open();
	REQUIRE(dev);
	CHECK((*dev)->queues().size() == 3);
	(*dev)->stop();
}

TEST_CASE("a classic mailbox means one queue, whatever tcmu-queue devices exist")
{
	set_log_level(log_level::error);
	mq_tree m(1);
	m.add_queue(5, "tcmu-queue/1/disk/1", 0);
	auto dev = m.open();
	REQUIRE(dev);
	CHECK((*dev)->queues().size() == 1);
	(*dev)->stop();
}

TEST_CASE("a queue uio device whose mailbox names another queue is refused (-EPROTO)")
{
	set_log_level(log_level::error);
	mq_tree m(3);
	m.add_queue(5, "tcmu-queue/1/disk/1", 1);
	m.add_queue(7, "tcmu-queue/1/disk/2", 1); // queue 1's mailbox under queue 2's name
	auto dev = m.open();
	REQUIRE_FALSE(dev);
	CHECK(dev.error().error == EPROTO);
}

TEST_CASE("a missing queue uio device fails the device (-ENOENT)")
{
	set_log_level(log_level::error);
	mq_tree m(3);
	m.add_queue(5, "tcmu-queue/1/disk/1", 1);
	auto dev = m.open();
	REQUIRE_FALSE(dev);
	CHECK(dev.error().error == ENOENT);
}

TEST_CASE("a device whose backing file is missing is refused, naming the path once")
{
	set_log_level(log_level::error);
	mq_tree m(2);
	m.add_queue(3, "tcm-user/1/disk/file//nonexistent/tcmud/img;direct=1", 0);
	auto info = read_uio_device(m.t.roots, "uio3");
	REQUIRE(info);
	auto dev = tcmu_device::open(m.t.roots, *info, device_options{}, ring_origin::fresh);
	REQUIRE_FALSE(dev);
	// tcmu_device logs it behind "file/disk: "; the handler names the file.
	CHECK(dev.error().what() == "cannot open /nonexistent/tcmud/img: No such file or directory");
}

TEST_CASE("a resize the device cannot take says why, and the old size is served")
{
	set_log_level(log_level::error);
	mq_tree m(1);
	auto dev = m.open();
	REQUIRE(dev);
	tcmu_device &d = **dev;
	auto odd = d.resize(1000);
	REQUIRE_FALSE(odd);
	CHECK(odd.error().what() == "resize to 1000 bytes refused: not a positive multiple of "
				    "the 512-byte block size: Invalid argument");
	// The scratch file is exactly the device's size and extend=1 is not set.
	const uint64_t bigger = 2 * block * blocks;
	auto grown = d.resize(bigger);
	REQUIRE_FALSE(grown);
	const std::string big = std::to_string(bigger);
	CHECK(grown.error().what() == "resize to " + big + " bytes refused: " +
					      m.unit.file.string() + " is " +
					      std::to_string(block * blocks) +
					      " bytes, smaller than the device size " + big +
					      ": Invalid argument — add ;extend=1 to grow it");
	CHECK(d.size_bytes() == block * blocks);
	d.stop();
}
