// SPDX-License-Identifier: GPL-2.0-or-later
// The attack the file handler must withstand: a user who owns a directory on
// a backing path swaps the image, or a directory above it, for a symbolic
// link to a file of root's, hoping that tcmud (root) opens it and that
// extend=1 grows it or the initiator's writes clobber it.
#include <grp.h>
#include <sys/wait.h>

#include "file/file_config.h"
#include "file_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

constexpr uid_t nobody = 65534;

// Runs `attack` in a child with the uid and gid of nobody and no
// supplementary groups; true if it did what it meant to. Only system calls
// in the child: it is a fork of a test program.
template <class F>
bool as_nobody(F &&attack)
{
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, nullptr) < 0 || setgid(nobody) < 0 || setuid(nobody) < 0)
			_exit(2);
		_exit(attack() ? 0 : 1);
	}
	int status = 0;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::vector<char> contents(const std::string &path)
{
	struct stat st;
	REQUIRE(stat(path.c_str(), &st) == 0);
	std::vector<char> data(static_cast<size_t>(st.st_size));
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	REQUIRE(pread(fd, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
	close(fd);
	return data;
}

} // namespace

TEST_CASE("a user owning a directory on the path cannot make tcmud open a file of root's",
	  "[file][symlink][privilege]")
{
	if (geteuid() != 0)
		TCMUD_SKIP("needs root, to own the victim and to become nobody");
	temp_dir base; // root's; nobody may pass through it, not write to it
	REQUIRE(chmod(base.path().c_str(), 0755) == 0);
	// Root's file outside the user's directory: a stand-in for /etc/shadow.
	const std::string victim = base / "victim";
	write_file(victim, 1 << 20, 'v');
	const std::vector<char> before = contents(victim);
	// The administrator's image, in a directory the user owns.
	const std::string lun = base / "lun";
	REQUIRE(mkdir(lun.c_str(), 0755) == 0);
	REQUIRE(mkdir((lun + "/d").c_str(), 0755) == 0);
	write_file(lun + "/img", 1 << 20, 'i');
	write_file(lun + "/d/img", 1 << 20, 'i');
	REQUIRE(chown(lun.c_str(), nobody, nobody) == 0);

	std::string path;
	SECTION("the image itself becomes a link")
	{
		path = lun + "/img";
		const std::string link = lun + "/img.new";
		// A rename over the image: there is never a moment without one.
		REQUIRE(as_nobody([&] {
			return symlink(victim.c_str(), link.c_str()) == 0 &&
			       rename(link.c_str(), path.c_str()) == 0;
		}));
	}
	SECTION("a directory on the path becomes a link")
	{
		path = lun + "/d/img";
		const std::string rootdir = base / "rootdir";
		REQUIRE(mkdir(rootdir.c_str(), 0755) == 0);
		REQUIRE(link(victim.c_str(), (rootdir + "/img").c_str()) == 0);
		const std::string d = lun + "/d";
		REQUIRE(as_nobody([&] {
			return rename(d.c_str(), (d + ".old").c_str()) == 0 &&
			       symlink(rootdir.c_str(), d.c_str()) == 0;
		}));
	}
	REQUIRE(!path.empty());
	INFO("backing path " << path);
	// The swap really happened, and without tcmud the path leads to root's file.
	struct stat via_path, of_victim;
	REQUIRE(stat(path.c_str(), &via_path) == 0);
	REQUIRE(stat(victim.c_str(), &of_victim) == 0);
	REQUIRE(via_path.st_ino == of_victim.st_ino);

	// CHECK, not REQUIRE: should either open, the victim is still looked at.
	auto checked = check_file_config(path + ";extend=1");
	CHECK_FALSE(checked);
	if (!checked) {
		CHECK(checked.error().error == ELOOP);
		CHECK(checked.error().what().find("does not follow symbolic links") !=
		      std::string::npos);
	}
	{
		auto opened = file_backstore::open(make_config(path + ";extend=1", 2 << 20));
		CHECK_FALSE(opened);
		if (!opened) {
			CHECK(opened.error().error == ELOOP);
			CHECK(opened.error().what().find("does not follow symbolic links") !=
			      std::string::npos);
		}
	}

	// Neither grown nor written.
	CHECK(stat(victim.c_str(), &of_victim) == 0);
	CHECK(of_victim.st_size == (1 << 20));
	CHECK((contents(victim) == before)); // compared whole, never printed (1 MiB)
}
