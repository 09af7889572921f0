// SPDX-License-Identifier: GPL-2.0-or-later
// open_nofollow: no symbolic link in any component, and a refusal that says
// which component is one.
#include "file/nofollow_open.h"
#include "file_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

TEST_CASE("open_nofollow opens a path without links", "[file][nofollow]")
{
	temp_dir dir;
	write_file(dir / "img", 4096, 'a');
	auto fd = open_nofollow(dir / "img", O_RDONLY | O_CLOEXEC);
	INFO((fd ? "" : fd.error().what()));
	REQUIRE(fd);
	CHECK(fd->get() >= 0);
}

TEST_CASE("open_nofollow refuses a link as the last component and names its target",
	  "[file][nofollow]")
{
	temp_dir dir;
	write_file(dir / "real", 4096, 'a');
	REQUIRE(symlink((dir / "real").c_str(), (dir / "img").c_str()) == 0);
	auto fd = open_nofollow(dir / "img", O_RDWR | O_CLOEXEC);
	REQUIRE_FALSE(fd);
	CHECK(fd.error().error == ELOOP);
	CHECK(fd.error().message ==
	      "cannot open " + dir / "img" + ": " + dir / "img" + " is a symbolic link to " +
		      dir / "real");
}

TEST_CASE("open_nofollow refuses a link to a directory on the way", "[file][nofollow]")
{
	temp_dir dir;
	REQUIRE(mkdir((dir / "real").c_str(), 0755) == 0);
	write_file(dir / "real/img", 4096, 'a');
	REQUIRE(symlink("real", (dir / "lun").c_str()) == 0);
	auto fd = open_nofollow(dir / "lun/img", O_RDWR | O_CLOEXEC);
	REQUIRE_FALSE(fd);
	CHECK(fd.error().error == ELOOP);
	CHECK(fd.error().message.find(dir / "lun is a symbolic link to real") !=
	      std::string::npos);
}

TEST_CASE("open_nofollow refuses /proc's magic links", "[file][nofollow]")
{
	temp_file file(4096);
	int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	// /proc/PID is a directory (unlike /proc/self); fd/N is the magic link.
	const std::string magic =
		"/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(fd);
	auto again = open_nofollow(magic, O_RDWR | O_CLOEXEC);
	close(fd);
	REQUIRE_FALSE(again);
	CHECK(again.error().error == ELOOP);
	CHECK(again.error().message.find(magic + " is a symbolic link to " + file.path()) !=
	      std::string::npos);
}

TEST_CASE("open_nofollow's walk, for where openat2 is hidden, keeps the same rule",
	  "[file][nofollow]")
{
	// systemd's RestrictSUIDSGID= blocks openat2 (ENOSYS): the shipped
	// unit sets it, so this is the path tcmud.service takes.
	temp_dir dir;
	REQUIRE(mkdir((dir / "real").c_str(), 0755) == 0);
	write_file(dir / "real/img", 4096, 'a');
	REQUIRE(symlink("real", (dir / "lun").c_str()) == 0);
	REQUIRE(symlink((dir / "real/img").c_str(), (dir / "real/link").c_str()) == 0);

	int fd = open_nofollow_walk(dir / "real/img", O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0);
	char c = 0;
	CHECK(pread(fd, &c, 1, 0) == 1);
	CHECK(c == 'a');
	close(fd);
	// "//" and a trailing "/" change nothing; a directory is not a file.
	fd = open_nofollow_walk("/" + dir / "real//img", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(open_nofollow_walk(dir / "lun/img", O_RDWR | O_CLOEXEC) == -ELOOP);
	CHECK(open_nofollow_walk(dir / "real/link", O_RDWR | O_CLOEXEC) == -ELOOP);
	CHECK(open_nofollow_walk(dir / "real/img/x", O_RDWR | O_CLOEXEC) == -ENOTDIR);
	CHECK(open_nofollow_walk(dir / "real/none", O_RDWR | O_CLOEXEC) == -ENOENT);
	CHECK(open_nofollow_walk("relative/img", O_RDWR | O_CLOEXEC) == -EINVAL);
	temp_file file(4096);
	int held = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
	REQUIRE(held >= 0);
	CHECK(open_nofollow_walk("/proc/" + std::to_string(getpid()) + "/fd/" +
					 std::to_string(held),
				 O_RDWR | O_CLOEXEC) == -ELOOP);
	close(held);
}
