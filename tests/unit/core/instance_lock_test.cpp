// SPDX-License-Identifier: GPL-2.0-or-later
// One tcmud per host: a running holder is refused at once and named; an
// exiting one is waited for; the lock goes with the holder.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/instance_lock.h"

using namespace tcmud;

namespace {

struct temp_dir {
	std::string path;
	temp_dir()
	{
		char tmpl[] = "/tmp/tcmud-lock-test-XXXXXX";
		REQUIRE(mkdtemp(tmpl));
		path = tmpl;
	}
	~temp_dir() { (void)!std::system(("rm -rf " + path).c_str()); }
};

// A child that takes the lock, says so on a pipe, and holds it until killed.
pid_t holder(const std::string &lock)
{
	int p[2];
	REQUIRE(pipe(p) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		auto l = instance_lock::take(lock, 0);
		char c = l ? 'y' : 'n';
		(void)!write(p[1], &c, 1);
		for (;;)
			pause();
	}
	close(p[1]);
	char c = 0;
	REQUIRE(read(p[0], &c, 1) == 1);
	close(p[0]);
	REQUIRE(c == 'y');
	return pid;
}

} // namespace

TEST_CASE("a second instance is refused at once, naming the running one", "[lock]")
{
	temp_dir dir;
	std::string lock = dir.path + "/run/tcmud.lock"; // the directory is made
	pid_t pid = holder(lock);
	auto t0 = std::chrono::steady_clock::now();
	auto second = instance_lock::take(lock, 30'000);
	auto took = std::chrono::steady_clock::now() - t0;
	REQUIRE_FALSE(second);
	CHECK(second.error().error == EBUSY);
	CHECK(second.error().what().find("already running as pid " + std::to_string(pid)) !=
	      std::string::npos);
	CHECK(second.error().what().find(lock) != std::string::npos);
	// A running holder is not waited for.
	CHECK(took < std::chrono::seconds(5));
	kill(pid, SIGKILL);
	waitpid(pid, nullptr, 0);
	// Gone with the holder: nothing to clean up.
	auto third = instance_lock::take(lock, 0);
	INFO((third ? "" : third.error().what()));
	REQUIRE(third);
	std::ifstream f(lock);
	long written = 0;
	f >> written;
	CHECK(written == getpid());
}

TEST_CASE("an exiting holder is waited for", "[lock]")
{
	temp_dir dir;
	std::string lock = dir.path + "/tcmud.lock";
	pid_t pid = holder(lock);
	// A zombie (killed, not yet reaped) counts as exiting; its files are
	// closed already, so the lock is free at once. What is waited for is
	// the time between the kill and the close, which a zombie has passed.
	kill(pid, SIGKILL);
	auto taken = instance_lock::take(lock, 10'000);
	INFO((taken ? "" : taken.error().what()));
	CHECK(taken);
	waitpid(pid, nullptr, 0);
}

TEST_CASE("the lock file is not followed through a symlink", "[lock]")
{
	temp_dir dir;
	std::string target = dir.path + "/elsewhere";
	std::string lock = dir.path + "/tcmud.lock";
	REQUIRE(symlink(target.c_str(), lock.c_str()) == 0);
	auto taken = instance_lock::take(lock, 0);
	REQUIRE_FALSE(taken);
	CHECK(taken.error().error == ELOOP);
	CHECK(access(target.c_str(), F_OK) != 0);
}
