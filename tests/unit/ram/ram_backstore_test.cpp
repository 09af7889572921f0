// SPDX-License-Identifier: GPL-2.0-or-later
// The ram handler: what it refuses at open, and that each request moves,
// zeroes or refuses exactly its own range, completing once inside submit().
#include <sys/sysinfo.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "handler_registry.h"
#include "ram/ram_backstore.h"
#include "tcmud/io_engine.h"

using namespace tcmud;

namespace {

struct counted_done final : io_completion {
	int calls = 0;
	int64_t result = 0;
	void io_done(int64_t r) override
	{
		++calls;
		result = r;
	}
};

// ram_queue never borrows an SQE; any call here is a bug.
struct no_engine final : io_engine {
	io_uring_sqe *get_sqe(io_completion *) override
	{
		FAIL("the ram handler asked for an SQE");
		return nullptr;
	}
	void wait_for_sqe(io_completion *) override { FAIL("the ram handler waited for an SQE"); }
};

backstore_config config(uint64_t size, std::string cfg = "")
{
	backstore_config c;
	c.subtype = "ram";
	c.cfgstring = std::move(cfg);
	c.dev_size = size;
	c.block_size = 512;
	c.log_prefix = "ram/test:";
	return c;
}

std::unique_ptr<backstore> open_ram(uint64_t size)
{
	auto store = find_handler("ram")->open(config(size));
	INFO((store ? "" : store.error().what()));
	REQUIRE(store);
	return std::move(*store);
}

// Runs one request to completion and returns its result.
int64_t run(backstore_queue &q, block_op op, uint64_t offset, std::vector<uint8_t> *buf,
	    uint64_t length = 0)
{
	counted_done done;
	block_io io;
	io.op = op;
	io.offset = offset;
	iovec v{};
	if (buf) {
		v = {buf->data(), buf->size()};
		io.iov = {&v, 1};
		io.length = buf->size();
	} else {
		io.length = length;
	}
	io.done = &done;
	q.submit(io);
	REQUIRE(done.calls == 1);
	return done.result;
}

} // namespace

TEST_CASE("ram: the handler is registered and says its contents are volatile", "[ram]")
{
	const handler_ops *h = find_handler("ram");
	REQUIRE(h);
	CHECK(h->config_desc.find("lost") != std::string_view::npos);
}

TEST_CASE("ram: the cfgstring is an optional label and nothing else", "[ram]")
{
	CHECK(check_ram_config(""));
	CHECK(check_ram_config("bench-1_a.b"));
	CHECK_FALSE(check_ram_config("/var/lib/x.img"));
	CHECK_FALSE(check_ram_config("a;direct=1"));
	CHECK_FALSE(check_ram_config(std::string(65, 'a')));
	auto labelled = ram_backstore::open(config(1 << 20, "/tmp/x"));
	REQUIRE_FALSE(labelled);
	CHECK(labelled.error().error == EINVAL);
	// Named in the message: tcmu_device logs it without the cfgstring.
	CHECK(labelled.error().what() ==
	      "'/tmp/x': the ram handler's cfgstring is an optional label of letters, digits, "
	      "'.', '_' and '-' (it has no backing file): Invalid argument");
}

TEST_CASE("ram: a size of zero or beyond the machine's memory is refused", "[ram]")
{
	auto empty = ram_backstore::open(config(0));
	REQUIRE_FALSE(empty);
	CHECK(empty.error().error == EINVAL);
	struct sysinfo si;
	REQUIRE(sysinfo(&si) == 0);
	uint64_t too_big = uint64_t(si.totalram) * si.mem_unit + (1 << 20);
	auto huge = ram_backstore::open(config(too_big));
	REQUIRE_FALSE(huge);
	CHECK(huge.error().error == ENOMEM);
	CHECK(huge.error().what().find("larger than this machine's memory") != std::string::npos);
}

TEST_CASE("ram: reads return what was written, untouched space reads as zeroes", "[ram]")
{
	auto store = open_ram(8 << 20);
	CHECK(store->size_bytes() == 8 << 20);
	no_engine engine;
	auto q = std::move(*store->open_queue(engine));
	std::vector<uint8_t> data(8192);
	for (size_t i = 0; i < data.size(); ++i)
		data[i] = uint8_t(i * 7 + 1);
	REQUIRE(run(*q, block_op::write, 4096 * 3, &data) == 8192);
	std::vector<uint8_t> back(8192, 0xee);
	REQUIRE(run(*q, block_op::read, 4096 * 3, &back) == 8192);
	CHECK(back == data);
	std::vector<uint8_t> fresh(512, 0xee);
	REQUIRE(run(*q, block_op::read, 1 << 20, &fresh) == 512);
	CHECK(fresh == std::vector<uint8_t>(512, 0));
	CHECK(run(*q, block_op::flush, 0, nullptr) == 0);
}

TEST_CASE("ram: discard and write_zeroes clear exactly their range", "[ram]")
{
	auto store = open_ram(1 << 20);
	CHECK(store->caps().discard_zeroes);
	CHECK(store->caps().write_zeroes);
	no_engine engine;
	auto q = std::move(*store->open_queue(engine));
	std::vector<uint8_t> ones(64 << 10, 0xff);
	REQUIRE(run(*q, block_op::write, 0, &ones) == int64_t(ones.size()));
	// Unaligned to pages on both ends: the head and tail are cleared by
	// hand, the whole pages inside are dropped.
	REQUIRE(run(*q, block_op::discard, 1536, nullptr, 20000) == 0);
	REQUIRE(run(*q, block_op::write_zeroes, 40000, nullptr, 512) == 0);
	std::vector<uint8_t> back(64 << 10);
	REQUIRE(run(*q, block_op::read, 0, &back) == int64_t(back.size()));
	for (size_t i = 0; i < back.size(); ++i) {
		bool cleared = (i >= 1536 && i < 1536 + 20000) || (i >= 40000 && i < 40512);
		INFO("byte " << i);
		REQUIRE(back[i] == (cleared ? 0 : 0xff));
	}
}

TEST_CASE("ram: a request past the end fails with EIO and moves nothing", "[ram]")
{
	auto store = open_ram(1 << 20);
	no_engine engine;
	auto q = std::move(*store->open_queue(engine));
	std::vector<uint8_t> buf(4096, 0x5a);
	CHECK(run(*q, block_op::write, (1 << 20) - 2048, &buf) == -EIO);
	CHECK(run(*q, block_op::discard, (1 << 20) - 512, nullptr, 1024) == -EIO);
	std::vector<uint8_t> tail(2048, 0xee);
	REQUIRE(run(*q, block_op::read, (1 << 20) - 2048, &tail) == 2048);
	CHECK(tail == std::vector<uint8_t>(2048, 0));
}
