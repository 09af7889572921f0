// SPDX-License-Identifier: GPL-2.0-or-later
// One writer per backing file (file/backing_lock.h): a second device on the
// file is refused, and the lock lives as long as any reference to the open
// file, as an io_uring request's does after its process is gone.
#include <sys/wait.h>

#include <chrono>

#include "file/backing_lock.h"
#include "file_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

setup_result<std::unique_ptr<file_backstore>> open_waiting(const std::string &path,
							   unsigned wait_ms)
{
	backstore_config cfg = make_config(path, 1 << 20);
	cfg.holder_wait_ms = wait_ms;
	return file_backstore::open(cfg);
}

} // namespace

TEST_CASE("a second device on one backing file is refused with EBUSY, naming it",
	  "[file][lock]")
{
	temp_file file(1 << 20);
	log_capture log;
	auto first = open_waiting(file.path(), 0);
	REQUIRE(first);
	auto second = open_waiting(file.path(), 300);
	REQUIRE_FALSE(second);
	CHECK(second.error().error == EBUSY);
	CHECK(second.error().what().find(file.path() + " is still locked") != std::string::npos);
	CHECK(log.contains("waiting up to"));
	// Closed, the first device's lock is gone with it.
	first->reset();
	auto third = open_waiting(file.path(), 0);
	INFO((third ? "" : third.error().what()));
	CHECK(third);
}

TEST_CASE("the lock outlives the fd while another reference to the open file lives",
	  "[file][lock]")
{
	temp_file file(1 << 20);
	log_capture log;
	int fd = open(file.path().c_str(), O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0);
	REQUIRE(lock_backing(fd, file.path(), 0, "file/test:"));
	// The child's copy of the open file stands for an io_uring request
	// still running after its daemon was killed: the owner's close does
	// not free the lock, the last reference's end does.
	int ready[2];
	REQUIRE(pipe(ready) == 0);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		close(ready[0]);
		(void)!write(ready[1], "x", 1);
		usleep(400'000);
		_exit(0);
	}
	close(ready[1]);
	char c;
	REQUIRE(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	close(fd);
	int other = open(file.path().c_str(), O_RDWR | O_CLOEXEC);
	REQUIRE(other >= 0);
	const auto t0 = std::chrono::steady_clock::now();
	auto locked = lock_backing(other, file.path(), 5'000, "file/test:");
	const auto waited = std::chrono::steady_clock::now() - t0;
	int status = 0;
	REQUIRE(waitpid(child, &status, 0) == child);
	INFO((locked ? "" : locked.error().what()));
	CHECK(locked);
	CHECK(waited >= std::chrono::milliseconds(300));
	CHECK(log.contains("the other holder let go after"));
	close(other);
}

TEST_CASE("the lock is per open file: the same process's second open is refused too",
	  "[file][lock]")
{
	temp_file file(1 << 20);
	log_capture log;
	int a = open(file.path().c_str(), O_RDWR | O_CLOEXEC);
	int b = open(file.path().c_str(), O_RDWR | O_CLOEXEC);
	REQUIRE(a >= 0);
	REQUIRE(b >= 0);
	REQUIRE(lock_backing(a, file.path(), 0, "file/test:"));
	auto second = lock_backing(b, file.path(), 0, "file/test:");
	CHECK_FALSE(second);
	close(a);
	CHECK(lock_backing(b, file.path(), 0, "file/test:"));
	close(b);
}
