// SPDX-License-Identifier: GPL-2.0-or-later
// Reading and writing single attribute files; number parsing.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>

#include "device/sysfs_file.h"
#include "fake_tree.h"

using namespace tcmud;
using namespace tcmud::test;

TEST_CASE("parse_u64 reads decimal and 0x-prefixed hex, ignoring the newline")
{
	CHECK(parse_u64("4096\n") == 4096u);
	CHECK(parse_u64("0x0000000040800000\n") == 0x40800000u);
}

TEST_CASE("parse_u64 refuses trailing garbage, empty text and overflow")
{
	CHECK_FALSE(parse_u64("12ab"));
	CHECK_FALSE(parse_u64(""));
	CHECK_FALSE(parse_u64("0x"));
	CHECK_FALSE(parse_u64("18446744073709551616"));
	CHECK_FALSE(parse_u64("-1"));
}

TEST_CASE("read_attribute drops the trailing newline")
{
	fake_tree t;
	fake_tree::write(t.roots.sysfs / "a", "tcm-user/1/d/file/x\n");
	auto s = read_attribute(t.roots.sysfs / "a");
	REQUIRE(s);
	CHECK(*s == "tcm-user/1/d/file/x");
}

TEST_CASE("read_attribute of a missing file is ENOENT, naming the file and the errno text")
{
	fake_tree t;
	auto p = t.roots.sysfs / "missing";
	auto s = read_attribute(p);
	REQUIRE_FALSE(s);
	CHECK(s.error().error == ENOENT);
	CHECK(s.error().what() == "cannot open " + p.string() + ": " + std::strerror(ENOENT));
}

TEST_CASE("an attribute that is not a number is EINVAL, naming the file and its text")
{
	fake_tree t;
	auto p = t.roots.sysfs / "size";
	fake_tree::write(p, "lots\n");
	auto v = read_u64_attribute(p);
	REQUIRE_FALSE(v);
	CHECK(v.error().error == EINVAL);
	CHECK(v.error().message == p.string() + " holds 'lots', not a number");
}

TEST_CASE("write_attribute writes exactly the value")
{
	fake_tree t;
	auto p = t.roots.configfs / "x";
	fake_tree::write(p, "old contents");
	REQUIRE(write_attribute(p, "1"));
	CHECK(fake_tree::read(p) == "1");
}

TEST_CASE("write_attribute to a missing file is -ENOENT, not a new file")
{
	fake_tree t;
	auto done = write_attribute(t.roots.configfs / "nope", "1");
	REQUIRE_FALSE(done);
	CHECK(done.error().error == ENOENT);
	CHECK_FALSE(fs::exists(t.roots.configfs / "nope"));
}
