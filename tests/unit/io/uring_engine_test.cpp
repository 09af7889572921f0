// SPDX-License-Identifier: GPL-2.0-or-later
// uring_engine against the real kernel io_uring: set-up flags, batched
// reaping, SQ overflow handling, waiters and fixed files.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "engine_test_util.h"
#include "tcmud/unique_fd.h"
#include "io/uring_engine.h"

using namespace tcmud;
using tcmud::test::recording_completion;

namespace {

std::unique_ptr<uring_engine> make_engine(uring_options opts = {})
{
	auto engine = uring_engine::create(opts);
	INFO("io_uring set-up failed: " << (engine ? "" : engine.error().what()));
	REQUIRE(engine);
	return std::move(*engine);
}

void queue_nop(uring_engine &engine, io_completion *done)
{
	io_uring_sqe *sqe = engine.get_sqe(done);
	REQUIRE(sqe);
	io_uring_prep_nop(sqe);
}

// Completes by queuing one more NOP for `next`, as a backstore resuming a
// short read would: work submitted from inside a completion.
struct chaining_completion final : io_completion {
	uring_engine *engine = nullptr;
	io_completion *next = nullptr;
	int calls = 0;
	void io_done(int64_t) override
	{
		calls++;
		io_uring_sqe *sqe = engine->get_sqe(next);
		io_uring_prep_nop(sqe);
	}
};

} // namespace

TEST_CASE("engine uses single-issuer deferred task running on a 6.1+ kernel", "[io]")
{
	auto engine = make_engine();
	unsigned flags = engine->setup_flags();
	CHECK((flags & IORING_SETUP_SINGLE_ISSUER));
	CHECK((flags & IORING_SETUP_DEFER_TASKRUN));
}

TEST_CASE("engine without defer_taskrun still serves completions", "[io]")
{
	uring_options opts;
	opts.defer_taskrun = false;
	auto engine = make_engine(opts);
	CHECK_FALSE((engine->setup_flags() & IORING_SETUP_DEFER_TASKRUN));
	recording_completion done;
	queue_nop(*engine, &done);
	REQUIRE(engine->run_once(1) == 1);
	CHECK(done.results == std::vector<int64_t>{0});
}

TEST_CASE("run_once reaps a whole batch and dispatches each completion once", "[io]")
{
	auto engine = make_engine();
	const unsigned idle = engine->in_flight(); // the engine's wake read
	std::vector<recording_completion> done(100);
	for (auto &d : done)
		queue_nop(*engine, &d);
	CHECK(engine->in_flight() == idle + 100);

	int reaped = 0;
	while (reaped < 100) {
		int ret = engine->run_once(static_cast<unsigned>(100 - reaped));
		REQUIRE(ret >= 0);
		reaped += ret;
	}
	CHECK(reaped == 100); // more than one reap chunk in one call
	for (auto &d : done)
		CHECK(d.results == std::vector<int64_t>{0});
	CHECK(engine->in_flight() == idle);
	CHECK(engine->run_once(0) == 0);
}

TEST_CASE("get_sqe flushes a full submission queue instead of failing", "[io]")
{
	uring_options opts;
	opts.entries = 8;
	auto engine = make_engine(opts);
	const unsigned idle = engine->in_flight();
	std::vector<recording_completion> done(50);
	for (auto &d : done)
		queue_nop(*engine, &d); // 50 > 8: needs the flush inside get_sqe
	while (engine->in_flight() > idle)
		REQUIRE(engine->run_once(1) >= 0);
	for (auto &d : done)
		CHECK(d.calls() == 1);
}

TEST_CASE("get_sqe_uncleared's inline path shares the SQ with get_sqe and flushes it when full",
	  "[io]")
{
	uring_options opts;
	opts.entries = 8;
	auto engine = make_engine(opts);
	io_engine &as_backstore_sees_it = *engine;
	const unsigned idle = engine->in_flight();
	std::vector<recording_completion> done(50);
	for (size_t i = 0; i < done.size(); i++) {
		// Alternating, so both kinds take slots after the other's; 50 > 8
		// takes the inline path to a full SQ and over to the flush.
		io_uring_sqe *sqe = i % 3 ? as_backstore_sees_it.get_sqe_uncleared(&done[i])
					  : engine->get_sqe(&done[i]);
		REQUIRE(sqe);
		CHECK(sqe->user_data == reinterpret_cast<uintptr_t>(&done[i]));
		io_uring_prep_nop(sqe); // every field but user_data
		CHECK(engine->in_flight() == idle + i + 1);
	}
	while (engine->in_flight() > idle)
		REQUIRE(engine->run_once(1) >= 0);
	for (auto &d : done)
		CHECK(d.results == std::vector<int64_t>{0});
}

TEST_CASE("work submitted from inside a completion completes in a later round", "[io]")
{
	auto engine = make_engine();
	recording_completion last;
	chaining_completion first;
	first.engine = engine.get();
	first.next = &last;
	queue_nop(*engine, &first);
	REQUIRE(engine->run_once(1) == 1);
	CHECK(first.calls == 1);
	CHECK(last.calls() == 0);
	REQUIRE(engine->run_once(1) == 1);
	CHECK(first.calls == 1);
	CHECK(last.calls() == 1);
}

TEST_CASE("run_once with a timeout returns 0 when nothing completes", "[io]")
{
	auto engine = make_engine();
	__kernel_timespec ts{.tv_sec = 0, .tv_nsec = 10'000'000};
	CHECK(engine->run_once(1, &ts) == 0);
}

TEST_CASE("a completion's negative result reaches io_done unchanged", "[io]")
{
	auto engine = make_engine();
	recording_completion done;
	io_uring_sqe *sqe = engine->get_sqe(&done);
	REQUIRE(sqe);
	static char byte;
	io_uring_prep_read(sqe, -1, &byte, 1, 0);
	REQUIRE(engine->run_once(1) == 1);
	CHECK(done.results == std::vector<int64_t>{-EBADF});
}

TEST_CASE("wait_for_sqe waiters are called once after the next round", "[io]")
{
	auto engine = make_engine();
	recording_completion waiter;
	engine->wait_for_sqe(&waiter);
	CHECK(waiter.calls() == 0);
	engine->run_once(0);
	CHECK(waiter.results == std::vector<int64_t>{0});
	engine->run_once(0);
	CHECK(waiter.calls() == 1);
}

TEST_CASE("a pending waiter keeps run_once from blocking", "[io]")
{
	auto engine = make_engine();
	recording_completion waiter;
	engine->wait_for_sqe(&waiter);
	__kernel_timespec ts{.tv_sec = 2, .tv_nsec = 0};
	auto start = std::chrono::steady_clock::now();
	engine->run_once(1, &ts);
	auto elapsed = std::chrono::steady_clock::now() - start;
	CHECK(waiter.calls() == 1);
	CHECK(elapsed < std::chrono::milliseconds(500));
}

TEST_CASE("a registered file serves reads through its fixed index", "[io]")
{
	auto engine = make_engine();
	char path[] = "/tmp/tcmud-io-fixed-XXXXXX";
	unique_fd fd(mkstemp(path));
	REQUIRE(fd);
	unlink(path);
	REQUIRE(pwrite(fd.get(), "fixed", 5, 0) == 5);

	auto registered = engine->register_file(fd.get());
	REQUIRE(registered);
	int index = *registered;
	char buf[8] = {};
	recording_completion done;
	io_uring_sqe *sqe = engine->get_sqe(&done);
	io_uring_prep_read(sqe, index, buf, 5, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	REQUIRE(engine->run_once(1) == 1);
	CHECK(done.results == std::vector<int64_t>{5});
	CHECK(std::string(buf) == "fixed");

	engine->unregister_file(index);
	auto again = engine->register_file(fd.get());
	REQUIRE(again);
	CHECK(*again == index); // the index is free again
}

TEST_CASE("register_file with every fixed-file index taken says so, naming the fd", "[io]")
{
	uring_options opts;
	opts.fixed_files = 1;
	auto engine = make_engine(opts);
	unique_fd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
	REQUIRE(fd);
	REQUIRE(engine->register_file(fd.get()));
	auto second = engine->register_file(fd.get());
	REQUIRE_FALSE(second);
	CHECK(second.error().error == ENFILE);
	CHECK(second.error().what() == "cannot register fd " + std::to_string(fd.get()) +
					       " as a fixed file: no free index (1 reserved): "
					       "Too many open files in system");
}

TEST_CASE("destroying the engine with a request pending neither hangs nor dispatches it", "[io]")
{
	int fds[2];
	REQUIRE(pipe(fds) == 0);
	unique_fd rd(fds[0]), wr(fds[1]);
	recording_completion done;
	char buf[4];
	{
		auto engine = make_engine();
		const unsigned idle = engine->in_flight();
		io_uring_sqe *sqe = engine->get_sqe(&done);
		io_uring_prep_read(sqe, rd.get(), buf, sizeof(buf), 0);
		engine->run_once(0);
		CHECK(engine->in_flight() == idle + 1);
	}
	CHECK(done.calls() == 0);
}

TEST_CASE("fixed_buffer_slice: inside one 1 GiB buffer, cut at its end, or nothing", "[fixed]")
{
	constexpr uint64_t gib = uint64_t(1) << 30;
	// 2.5 GiB at a made-up address: buffers 0 and 1 of 1 GiB, 2 of 0.5.
	const fixed_buffer_area area{0x7f0000000000, size_t(5 * gib / 2)};
	int index = -1;
	CHECK(fixed_buffer_slice(area, area.base, 4096, &index) == 4096);
	CHECK(index == 0);
	CHECK(fixed_buffer_slice(area, area.base + gib + 8192, 65536, &index) == 65536);
	CHECK(index == 1);
	// Across the boundary of buffers 0 and 1: up to the boundary only.
	CHECK(fixed_buffer_slice(area, area.base + gib - 4096, 16384, &index) == 4096);
	CHECK(index == 0);
	// In the last, shorter buffer, up to the very end.
	CHECK(fixed_buffer_slice(area, area.base + 5 * gib / 2 - 8192, 8192, &index) == 8192);
	CHECK(index == 2);
	// Past the end, before the start, or no area at all: nothing.
	index = -1;
	CHECK(fixed_buffer_slice(area, area.base + 5 * gib / 2 - 4096, 8192, &index) == 0);
	CHECK(fixed_buffer_slice(area, area.base + 5 * gib / 2, 1, &index) == 0);
	CHECK(fixed_buffer_slice(area, area.base - 4096, 8192, &index) == 0);
	CHECK(fixed_buffer_slice(fixed_buffer_area{}, 4096, 4096, &index) == 0);
	CHECK(index == -1);
}

TEST_CASE("register_buffers makes the area fixed buffers until the registration goes", "[fixed]")
{
	auto engine = make_engine();
	CHECK(engine->fixed_buffers().size == 0);
	std::vector<std::byte> area(64 << 10);
	{
		auto reg = engine->register_buffers(area);
		INFO("register_buffers: " << (reg ? "" : reg.error().what()));
		REQUIRE(reg);
		CHECK(engine->fixed_buffers().base == reinterpret_cast<uintptr_t>(area.data()));
		CHECK(engine->fixed_buffers().size == area.size());
		CHECK(engine->register_buffers(area).error().error == EBUSY);
		fixed_buffer_registration moved = std::move(*reg);
		CHECK(moved);
	}
	CHECK(engine->fixed_buffers().size == 0);
	CHECK(engine->register_buffers({}).error().error == EINVAL);
	auto again = engine->register_buffers(area);
	CHECK(again);
}
