// SPDX-License-Identifier: GPL-2.0-or-later
// Opening and mapping a uio device; the 4-byte notify and event words. The
// fake /dev/uioN is a plain file, which mmap, read and write treat alike.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>

#include "device/uio_device.h"
#include "fake_tree.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

uio_device_info fake_info(fake_tree &t, const std::string &content)
{
	fake_tree::write(t.roots.dev / "uio5", content);
	uio_device_info info;
	info.uio = "uio5";
	info.minor = 5;
	info.map_size = content.size();
	return info;
}

} // namespace

TEST_CASE("open maps map0 shared: bytes written through it reach the device")
{
	fake_tree t;
	auto info = fake_info(t, std::string(8192, 'k'));
	auto opened = uio_device::open(t.roots, info, {});
	REQUIRE(opened);
	uio_device &dev = *opened;
	REQUIRE(dev.mapping().size() == 8192);
	CHECK(dev.mapping()[100] == std::byte{'k'});

	dev.mapping()[0] = std::byte{'Z'};
	::msync(dev.mapping().data(), 4096, MS_SYNC);
	CHECK(fake_tree::read(t.roots.dev / "uio5")[0] == 'Z');
}

TEST_CASE("notify writes one 4-byte word to the uio fd")
{
	fake_tree t;
	auto info = fake_info(t, std::string(4096, '\0'));
	auto opened = uio_device::open(t.roots, info, {});
	REQUIRE(opened);
	uio_device &dev = *opened;
	REQUIRE(dev.notify(0x01020304) == 0);

	std::string bytes = fake_tree::read(t.roots.dev / "uio5").substr(0, 4);
	uint32_t v = 0;
	std::memcpy(&v, bytes.data(), 4);
	CHECK(v == 0x01020304);
}

TEST_CASE("read_event returns the 4-byte event count")
{
	fake_tree t;
	std::string content(4096, '\0');
	uint32_t count = 77;
	std::memcpy(content.data(), &count, 4);
	auto info = fake_info(t, content);
	auto opened = uio_device::open(t.roots, info, {});
	REQUIRE(opened);
	uio_device &dev = *opened;
	uint32_t got = 0;
	REQUIRE(dev.read_event(got) == 0);
	CHECK(got == 77);
}

TEST_CASE("opening a device node that does not exist is -ENOENT")
{
	fake_tree t;
	uio_device_info info;
	info.uio = "uio9";
	info.map_size = 4096;
	auto opened = uio_device::open(t.roots, info, {});
	REQUIRE_FALSE(opened);
	CHECK(opened.error().error == ENOENT);
	CHECK(opened.error().message == "cannot open " + (t.roots.dev / "uio9").string());
}

TEST_CASE("a uio name that is not one path component is refused before open")
{
	fake_tree t;
	uio_device_info info;
	info.uio = "../uio0";
	info.map_size = 4096;
	CHECK(uio_device::open(t.roots, info, {}).error().error == EINVAL);
}

TEST_CASE("moving a uio_device moves ownership of the fd and the mapping")
{
	fake_tree t;
	auto info = fake_info(t, std::string(4096, 'a'));
	auto opened = uio_device::open(t.roots, info, {});
	REQUIRE(opened);
	uio_device &a = *opened;
	int fd = a.fd();
	auto *addr = a.mapping().data();

	uio_device b = std::move(a);
	CHECK(b.fd() == fd);
	CHECK(b.mapping().data() == addr);
	CHECK(a.fd() < 0);
	CHECK(a.mapping().empty());
}
