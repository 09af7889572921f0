// SPDX-License-Identifier: GPL-2.0-or-later
// Reading and writing single attribute files; number parsing.
#include <catch2/catch.hpp>

#include <cerrno>

#include "device/sysfs_file.h"
#include "fake_tree.h"

using namespace tcmud;
using namespace tcmud::test;

TEST_CASE("parse_u64 reads decimal and 0x-prefixed hex, ignoring the newline")
{
	uint64_t v = 0;
	CHECK(parse_u64("4096\n", v) == 0);
	CHECK(v == 4096);
	CHECK(parse_u64("0x0000000040800000\n", v) == 0);
	CHECK(v == 0x40800000);
}

TEST_CASE("parse_u64 refuses trailing garbage, empty text and overflow")
{
	uint64_t v = 7;
	CHECK(parse_u64("12ab", v) == -EINVAL);
	CHECK(parse_u64("", v) == -EINVAL);
	CHECK(parse_u64("0x", v) == -EINVAL);
	CHECK(parse_u64("18446744073709551616", v) == -EINVAL);
	CHECK(parse_u64("-1", v) == -EINVAL);
	CHECK(v == 7);
}

TEST_CASE("read_attribute drops the trailing newline")
{
	fake_tree t;
	fake_tree::write(t.roots.sysfs / "a", "tcm-user/1/d/file/x\n");
	std::string s;
	REQUIRE(read_attribute(t.roots.sysfs / "a", s) == 0);
	CHECK(s == "tcm-user/1/d/file/x");
}

TEST_CASE("read_attribute of a missing file is -ENOENT")
{
	fake_tree t;
	std::string s;
	CHECK(read_attribute(t.roots.sysfs / "missing", s) == -ENOENT);
}

TEST_CASE("write_attribute writes exactly the value")
{
	fake_tree t;
	auto p = t.roots.configfs / "x";
	fake_tree::write(p, "old contents");
	REQUIRE(write_attribute(p, "1") == 0);
	CHECK(fake_tree::read(p) == "1");
}

TEST_CASE("write_attribute to a missing file is -ENOENT, not a new file")
{
	fake_tree t;
	CHECK(write_attribute(t.roots.configfs / "nope", "1") == -ENOENT);
	CHECK_FALSE(fs::exists(t.roots.configfs / "nope"));
}
