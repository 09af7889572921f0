// SPDX-License-Identifier: GPL-2.0-or-later
// uring_engine's fd watches (the uio doorbell path) and its cross-thread
// wake channel, against the real kernel.
#include <catch2/catch.hpp>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "engine_test_util.h"
#include "tcmud/unique_fd.h"
#include "io/uring_engine.h"

using namespace tcmud;
using tcmud::test::no_free_fds;
using tcmud::test::recording_completion;

namespace {

std::unique_ptr<uring_engine> make_engine()
{
	auto engine = uring_engine::create({});
	INFO("io_uring set-up failed: " << (engine ? "" : engine.error().what()));
	REQUIRE(engine);
	return std::move(*engine);
}

const __kernel_timespec short_wait{.tv_sec = 0, .tv_nsec = 20'000'000};
const __kernel_timespec long_wait{.tv_sec = 5, .tv_nsec = 0};

void signal_eventfd(int fd)
{
	uint64_t one = 1;
	REQUIRE(write(fd, &one, sizeof(one)) == sizeof(one));
}

void drain_eventfd(int fd)
{
	uint64_t count;
	REQUIRE(read(fd, &count, sizeof(count)) == sizeof(count));
}

// Like a queue worker: consumes the doorbell when told it rang.
struct draining_target final : io_completion {
	int fd = -1;
	std::vector<int64_t> results;
	void io_done(int64_t result) override
	{
		results.push_back(result);
		uint64_t count;
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			results.push_back(-1000);
	}
};

} // namespace

TEST_CASE("a readable watch fires on an eventfd each time it is signalled", "[io][watch]")
{
	auto engine = make_engine();
	unique_fd efd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	REQUIRE(efd);
	draining_target target;
	target.fd = efd.get();
	REQUIRE(engine->watch_readable(efd.get(), &target) >= 0);

	CHECK(engine->run_once(1, &short_wait) == 0); // nothing yet
	CHECK(target.results.empty());

	for (int round = 1; round <= 3; round++) {
		signal_eventfd(efd.get());
		engine->run_once(1, &long_wait);
		REQUIRE(target.results.size() == static_cast<size_t>(round));
		CHECK((target.results.back() & POLLIN));
	}
}

TEST_CASE("a readable watch fires on a pipe", "[io][watch]")
{
	auto engine = make_engine();
	int fds[2];
	REQUIRE(pipe(fds) == 0);
	unique_fd rd(fds[0]), wr(fds[1]);
	recording_completion target;
	REQUIRE(engine->watch_readable(rd.get(), &target) >= 0);
	REQUIRE(write(wr.get(), "x", 1) == 1);
	engine->run_once(1, &long_wait);
	REQUIRE(target.calls() >= 1);
	CHECK((target.results[0] & POLLIN));
}

TEST_CASE("after unwatch the target is not called again", "[io][watch]")
{
	auto engine = make_engine();
	unique_fd efd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	draining_target target;
	target.fd = efd.get();
	const unsigned idle = engine->in_flight();
	int id = engine->watch_readable(efd.get(), &target);
	REQUIRE(id >= 0);
	engine->run_once(0);
	engine->unwatch(id);
	signal_eventfd(efd.get());
	for (int i = 0; i < 3; i++)
		engine->run_once(1, &short_wait);
	CHECK(target.results.empty());
	// The poll was removed in the io_uring: nothing of it is left in flight.
	CHECK(engine->in_flight() == idle);
	drain_eventfd(efd.get());
	// ... and the watch was freed: the next one takes its id.
	CHECK(engine->watch_readable(efd.get(), &target) == id);
}

TEST_CASE("a watch that cannot poll still returns an id; EBADF reaches its target once",
	  "[io][watch]")
{
	// watch_readable has no error to return: what fails, fails in the
	// io_uring, and arrives as io_done(-errno) (queue_worker's doorbell).
	auto engine = make_engine();
	recording_completion target;
	int id = engine->watch_readable(-1, &target);
	CHECK(id >= 0);
	REQUIRE(engine->run_once(1, &long_wait) >= 1);
	engine->run_once(0, &short_wait);
	CHECK(target.results == std::vector<int64_t>{-EBADF});
	// The dead watch was freed after its last CQE: its id is free again.
	CHECK(engine->watch_readable(-1, &target) == id);
}

TEST_CASE("request_stop from another thread makes run() return", "[io][wake]")
{
	auto engine = make_engine();
	std::thread stopper([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		engine->request_stop();
	});
	int ret = engine->run(); // would block forever without the wake
	stopper.join();
	CHECK(ret == 0);
	CHECK(engine->stop_requested());
}

TEST_CASE("wake from another thread calls the wake completion on the owner", "[io][wake]")
{
	auto engine = make_engine();
	recording_completion done;
	engine->set_wake_completion(&done);
	std::thread waker([&] { REQUIRE(engine->wake() == 0); });
	waker.join();
	engine->run_once(1, &long_wait);
	CHECK(done.results == std::vector<int64_t>{1});

	// The read is re-armed: a second wake is delivered too.
	REQUIRE(engine->wake() == 0);
	engine->run_once(1, &long_wait);
	CHECK(done.calls() == 2);
}

// Not tagged [wake]: valgrind (io-valgrind) keeps its own fd limit and lets
// the eventfd through.
TEST_CASE("a wake channel that gets no eventfd says what it could not create", "[io][eventfd]")
{
	auto engine = make_engine();
	wake_channel extra(*engine);
	setup_result<void> opened;
	{
		no_free_fds limit;
		REQUIRE(limit.ok());
		opened = extra.open();
	}
	REQUIRE_FALSE(opened);
	CHECK(opened.error().error == EMFILE);
	CHECK(opened.error().what() ==
	      "cannot create the io_uring's wake-up eventfd: Too many open files");
}
