// SPDX-License-Identifier: GPL-2.0-or-later
// file_queue's hard cases: short transfers, end of file, errors (real and
// injected through the result filter), bad requests and a full SQ.
#include <signal.h>
#include <sys/resource.h>

#include "file_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

constexpr uint64_t dev_size = 1 << 20;

std::vector<char> pattern(size_t len, unsigned seed)
{
	std::vector<char> data(len);
	for (size_t i = 0; i < len; i++)
		data[i] = static_cast<char>((i * 17 + seed) & 0xff);
	return data;
}

struct queue_fixture {
	temp_file file{dev_size};
	std::unique_ptr<uring_engine> engine = make_engine();
	gated_engine gate{*engine};
	std::unique_ptr<backstore> store = open_store(file.path(), dev_size);
	std::unique_ptr<backstore_queue> queue = std::move(*store->open_queue(gate));
	file_queue &fq() { return static_cast<file_queue &>(*queue); }
};

// Result filter: the first result becomes `first`, later ones pass; counts
// how many results the queue saw (one per SQE).
struct rewrite_first {
	int64_t first = 0;
	int seen = 0;
	static int64_t filter(void *ctx, const block_io &, int64_t result)
	{
		auto *self = static_cast<rewrite_first *>(ctx);
		return self->seen++ == 0 ? self->first : result;
	}
};

// Result filter: every result after the first `pass` becomes `error`.
struct fail_after {
	int pass = 0;
	int64_t error = 0;
	static int64_t filter(void *ctx, const block_io &, int64_t result)
	{
		auto *self = static_cast<fail_after *>(ctx);
		return self->pass-- > 0 ? result : self->error;
	}
};

} // namespace

TEST_CASE("a short read is resumed mid-iovec until the request is done", "[file][short]")
{
	queue_fixture f;
	std::vector<char> data = pattern(8192, 1);
	int fd = open(f.file.path().c_str(), O_WRONLY | O_CLOEXEC);
	REQUIRE(pwrite(fd, data.data(), data.size(), 0) == 8192);
	close(fd);

	rewrite_first cut{.first = 1000};
	f.fq().set_result_filter(rewrite_first::filter, &cut);
	std::vector<char> back(8192, 'X');
	iovec iov[2] = {{back.data(), 512}, {back.data() + 512, 7680}};
	block_io io = make_rw(block_op::read, 0, iov);
	CHECK(run_io(*f.engine, *f.queue, io) == 8192);
	CHECK(cut.seen == 2); // the rest came from a second, resumed read
	CHECK(io.progress == 8192);
	CHECK(back == data);
}

TEST_CASE("a short write is resumed and the file ends up complete", "[file][short]")
{
	queue_fixture f;
	rewrite_first cut{.first = 3000};
	f.fq().set_result_filter(rewrite_first::filter, &cut);
	std::vector<char> data = pattern(8192, 2);
	iovec iov[2] = {{data.data(), 4096}, {data.data() + 4096, 4096}};
	block_io io = make_rw(block_op::write, 4096, iov);
	CHECK(run_io(*f.engine, *f.queue, io) == 8192);
	CHECK(cut.seen == 2);
	std::vector<char> on_disk = f.file.read_all();
	CHECK(std::equal(data.begin(), data.end(), on_disk.begin() + 4096));
}

TEST_CASE("more iovecs than one SQE may carry are moved in several", "[file][short]")
{
	queue_fixture f;
	const size_t count = 1500; // > IOV_MAX (1024)
	std::vector<char> data = pattern(count * 512, 3);
	std::vector<iovec> iov(count);
	for (size_t i = 0; i < count; i++)
		iov[i] = {data.data() + i * 512, 512};
	block_io write = make_rw(block_op::write, 0, iov);
	CHECK(run_io(*f.engine, *f.queue, write) == static_cast<int64_t>(data.size()));

	std::vector<char> back(data.size(), 'X');
	for (size_t i = 0; i < count; i++)
		iov[i] = {back.data() + i * 512, 512};
	block_io read = make_rw(block_op::read, 0, iov);
	CHECK(run_io(*f.engine, *f.queue, read) == static_cast<int64_t>(data.size()));
	CHECK(back == data);
}

TEST_CASE("a read that meets end of file is -EIO and logged", "[file][short]")
{
	queue_fixture f;
	// Someone shrank the backing file behind the daemon's back.
	REQUIRE(truncate(f.file.path().c_str(), 4096 + 100) == 0);
	log_capture log;
	std::vector<char> back(8192);
	iovec iov{back.data(), back.size()};
	block_io io = make_rw(block_op::read, 4096, {&iov, 1});
	CHECK(run_io(*f.engine, *f.queue, io) == -EIO);
	CHECK(io.progress == 100);
	CHECK(log.contains("file/test: read at offset 4096 stopped after 100 of 8192"));
}

TEST_CASE("EIO from the file is passed to done as -EIO", "[file][error]")
{
	queue_fixture f;
	fail_after inject{.pass = 0, .error = -EIO};
	f.fq().set_result_filter(fail_after::filter, &inject);
	std::vector<char> buf(4096);
	iovec iov{buf.data(), buf.size()};
	block_io io = make_rw(block_op::read, 0, {&iov, 1});
	CHECK(run_io(*f.engine, *f.queue, io) == -EIO);
}

TEST_CASE("ENOSPC from the file is passed to done as -ENOSPC", "[file][error]")
{
	queue_fixture f;
	fail_after inject{.pass = 0, .error = -ENOSPC};
	f.fq().set_result_filter(fail_after::filter, &inject);
	std::vector<char> buf(4096);
	iovec iov{buf.data(), buf.size()};
	block_io io = make_rw(block_op::write, 0, {&iov, 1});
	CHECK(run_io(*f.engine, *f.queue, io) == -ENOSPC);
}

TEST_CASE("an error after partial progress fails the whole request", "[file][error]")
{
	queue_fixture f;
	rewrite_first cut{.first = 512};
	f.fq().set_result_filter(rewrite_first::filter, &cut);
	fail_after inject{.pass = 1, .error = -EIO};
	// Chain both: the first result is cut short, the resumed one fails.
	struct both {
		rewrite_first *cut;
		fail_after *fail;
		static int64_t filter(void *ctx, const block_io &io, int64_t r)
		{
			auto *self = static_cast<both *>(ctx);
			r = rewrite_first::filter(self->cut, io, r);
			return fail_after::filter(self->fail, io, r);
		}
	} chain{&cut, &inject};
	f.fq().set_result_filter(both::filter, &chain);
	std::vector<char> buf(4096);
	iovec iov{buf.data(), buf.size()};
	block_io io = make_rw(block_op::write, 0, {&iov, 1});
	CHECK(run_io(*f.engine, *f.queue, io) == -EIO);
	CHECK(io.progress == 512);
}

TEST_CASE("a real kernel error (EFBIG past RLIMIT_FSIZE) reaches done", "[file][error]")
{
	queue_fixture f;
	rlimit saved;
	REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
	auto old_handler = signal(SIGXFSZ, SIG_IGN);
	rlimit limit = saved;
	limit.rlim_cur = 4096 + 1024;
	REQUIRE(setrlimit(RLIMIT_FSIZE, &limit) == 0);

	std::vector<char> buf(4096, 'a');
	iovec iov{buf.data(), buf.size()};
	block_io io = make_rw(block_op::write, 4096, {&iov, 1});
	int64_t result = run_io(*f.engine, *f.queue, io);

	setrlimit(RLIMIT_FSIZE, &saved);
	signal(SIGXFSZ, old_handler);
	CHECK(result == -EFBIG);
	CHECK(io.progress == 1024); // the part below the limit was written
}

TEST_CASE("a request beyond the device size fails with -EINVAL, asynchronously", "[file][error]")
{
	queue_fixture f;
	std::vector<char> buf(4096);
	iovec iov{buf.data(), buf.size()};
	block_io io = make_rw(block_op::read, dev_size - 512, {&iov, 1});
	recording_completion done;
	io.done = &done;
	f.queue->submit(io);
	CHECK(done.results.empty()); // never called back from inside submit()
	f.engine->run_once(1);
	CHECK(done.results == std::vector<int64_t>{-EINVAL});
}

TEST_CASE("iovecs that do not add up to the length are refused", "[file][error]")
{
	queue_fixture f;
	std::vector<char> buf(4096);
	iovec iov{buf.data(), buf.size()};
	block_io io = make_rw(block_op::read, 0, {&iov, 1});
	io.length = 8192;
	CHECK(run_io(*f.engine, *f.queue, io) == -EINVAL);
}

TEST_CASE("with the SQ full, requests are parked in order and run after the next reap", "[file][backpressure]")
{
	queue_fixture f;
	std::vector<std::vector<char>> data;
	std::vector<iovec> iov(3);
	std::vector<block_io> ios(3);
	std::vector<recording_completion> done(3);
	f.gate.full = true;
	for (size_t i = 0; i < 3; i++) {
		// Same block each time: only in-order execution leaves the last.
		data.push_back(pattern(4096, static_cast<unsigned>(10 + i)));
		iov[i] = {data[i].data(), 4096};
		ios[i] = make_rw(block_op::write, 0, {&iov[i], 1});
		ios[i].done = &done[i];
		f.queue->submit(ios[i]);
	}
	CHECK(f.fq().parked() == 3);
	CHECK(f.gate.refused == 1); // later ones queue behind without asking
	f.engine->run_once(0);
	CHECK(f.fq().parked() == 3); // still full: parked again, nothing lost
	f.gate.full = false;
	const __kernel_timespec wait{.tv_sec = 5, .tv_nsec = 0};
	for (int round = 0; round < 20 && done[2].results.empty(); round++)
		f.engine->run_once(1, &wait);
	CHECK(f.fq().parked() == 0);
	for (size_t i = 0; i < 3; i++)
		CHECK(done[i].results == std::vector<int64_t>{4096});
	std::vector<char> on_disk = f.file.read_all();
	CHECK(std::equal(data[2].begin(), data[2].end(), on_disk.begin()));
}
