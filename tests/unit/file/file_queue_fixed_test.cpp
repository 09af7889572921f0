// SPDX-License-Identifier: GPL-2.0-or-later
// file_queue over a data area registered as io_uring fixed buffers (what a
// queue gets where the mailbox has TCMU_MAILBOX_FLAG_CAP_DATA_FIXED): one
// contiguous range inside the area goes as READ_FIXED/WRITE_FIXED with the
// right buffer index, anything else as before, and the data is right
// either way, short transfers included. A registration the kernel refuses
// (RLIMIT_MEMLOCK) leaves the queue on the plain ops.
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <algorithm>

#include "file_test_util.h"
#include "../../support/drop_cap_ipc_lock.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

constexpr uint64_t dev_size = 1 << 20;
constexpr size_t area_size = 256 << 10;

std::vector<char> pattern(size_t len, unsigned seed)
{
	std::vector<char> data(len);
	for (size_t i = 0; i < len; i++)
		data[i] = static_cast<char>((i * 13 + seed) & 0xff);
	return data;
}

// Page-aligned anonymous memory standing in for a queue's data area.
struct area_map {
	std::byte *p = nullptr;
	size_t size = 0;
	explicit area_map(size_t bytes) : size(bytes)
	{
		void *m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		REQUIRE(m != MAP_FAILED);
		p = static_cast<std::byte *>(m);
	}
	~area_map() { munmap(p, size); }
	area_map(const area_map &) = delete;
	area_map &operator=(const area_map &) = delete;
	char *at(size_t off) { return reinterpret_cast<char *>(p + off); }
};

// The engine registers the area before the queue opens, as the worker does.
struct fixed_fixture {
	temp_file file{dev_size};
	area_map area{area_size};
	std::unique_ptr<uring_engine> engine = make_engine();
	fixed_buffer_registration reg;
	gated_engine gate{*engine};
	std::unique_ptr<backstore> store;
	std::unique_ptr<backstore_queue> queue;

	// registered: how much of the area, from its start (0: none).
	explicit fixed_fixture(size_t registered = area_size)
	{
		if (registered) {
			auto r = engine->register_buffers({area.p, registered});
			INFO("register_buffers: " << (r ? "" : r.error().what()));
			REQUIRE(r);
			reg = std::move(*r);
		}
		store = open_store(file.path(), dev_size);
		queue = std::move(*store->open_queue(gate));
	}
	~fixed_fixture()
	{
		queue.reset();
		reg.reset();
	}
	file_queue &fq() { return static_cast<file_queue &>(*queue); }

	void put_on_file(uint64_t off, const std::vector<char> &data)
	{
		int fd = open(file.path().c_str(), O_WRONLY | O_CLOEXEC);
		REQUIRE(fd >= 0);
		REQUIRE(pwrite(fd, data.data(), data.size(), static_cast<off_t>(off)) ==
			static_cast<ssize_t>(data.size()));
		close(fd);
	}
	std::vector<char> from_file(uint64_t off, size_t len)
	{
		std::vector<char> all = file.read_all();
		return {all.begin() + static_cast<ptrdiff_t>(off),
			all.begin() + static_cast<ptrdiff_t>(off + len)};
	}
};

struct rewrite_first {
	int64_t first = 0;
	int seen = 0;
	static int64_t filter(void *ctx, const block_io &, int64_t result)
	{
		auto *self = static_cast<rewrite_first *>(ctx);
		return self->seen++ == 0 ? self->first : result;
	}
};

size_t count_op(gated_engine &gate, uint8_t opcode)
{
	const auto &seq = gate.sequence();
	return static_cast<size_t>(std::count_if(seq.begin(), seq.end(),
		[&](const io_uring_sqe &s) { return s.opcode == opcode; }));
}

} // namespace

TEST_CASE("one iovec inside the registered area goes as WRITE_FIXED and READ_FIXED", "[file][fixed]")
{
	fixed_fixture f;
	REQUIRE(f.fq().uses_fixed_buffers());
	std::vector<char> data = pattern(8192, 3);
	std::copy(data.begin(), data.end(), f.area.at(16384));
	iovec out{f.area.at(16384), data.size()};
	block_io write = make_rw(block_op::write, 4096, {&out, 1});
	CHECK(run_io(*f.engine, *f.queue, write) == 8192);
	CHECK(f.gate.last->opcode == IORING_OP_WRITE_FIXED);
	CHECK(f.gate.last->buf_index == 0);
	CHECK(f.from_file(4096, 8192) == data);

	std::fill(f.area.at(65536), f.area.at(65536 + 8192), 'X');
	iovec in{f.area.at(65536), 8192};
	block_io read = make_rw(block_op::read, 4096, {&in, 1});
	CHECK(run_io(*f.engine, *f.queue, read) == 8192);
	CHECK(f.gate.last->opcode == IORING_OP_READ_FIXED);
	CHECK(std::equal(data.begin(), data.end(), f.area.at(65536)));
	CHECK(f.fq().fixed_buffer_sqes() == 2);
}

// An area over 1 GiB is several registered buffers: the queue cuts a range
// at a buffer's end and names the buffer it starts in. Registering that much
// would pin gigabytes, so the queue is told of an area that registers
// nothing (the kernel then fails the I/O; only the prepared SQEs count).
TEST_CASE("an area over 1 GiB: the range is cut at its buffer's end and indexed", "[file][fixed]")
{
	constexpr uint64_t gib = uint64_t{1} << 30;
	temp_file file{dev_size};
	area_map area{area_size};
	auto engine = make_engine();
	gated_engine gate{*engine};
	// Buffer 0 ends 4 KiB into the mapping; buffer 1 covers the rest.
	const auto base = reinterpret_cast<uintptr_t>(area.p) + 4096 - gib;
	gate.pretend_area = fixed_buffer_area{base, 2 * gib};
	auto store = open_store(file.path(), dev_size);
	auto queue = std::move(*store->open_queue(gate));
	auto &fq = static_cast<file_queue &>(*queue);
	REQUIRE(fq.uses_fixed_buffers());

	iovec across{area.at(0), 16384};
	block_io read = make_rw(block_op::read, 0, {&across, 1});
	recording_completion done;
	read.done = &done;
	fq.submit(read);
	io_uring_sqe first = *gate.last;
	CHECK(first.opcode == IORING_OP_READ_FIXED);
	CHECK(first.buf_index == 0);
	CHECK(first.len == 4096);
	CHECK(first.addr == reinterpret_cast<uintptr_t>(area.at(0)));

	iovec second_buffer{area.at(8192), 8192};
	block_io write = make_rw(block_op::write, 8192, {&second_buffer, 1});
	recording_completion done2;
	write.done = &done2;
	fq.submit(write);
	CHECK(gate.last->opcode == IORING_OP_WRITE_FIXED);
	CHECK(gate.last->buf_index == 1);
	CHECK(gate.last->len == 8192);
	CHECK(fq.fixed_buffer_sqes() == 2);

	// Let both end (in errors: nothing is registered) before the queue closes.
	const __kernel_timespec wait{.tv_sec = 5, .tv_nsec = 0};
	for (int round = 0; round < 100 && (done.results.empty() || done2.results.empty()); round++)
		REQUIRE(engine->run_once(1, &wait) >= 0);
	CHECK(done.results.size() == 1);
	CHECK(done2.results.size() == 1);
}

TEST_CASE("adjacent iovecs count as one range; a gap takes the vectored path", "[file][fixed]")
{
	fixed_fixture f;
	std::vector<char> data = pattern(12288, 5);
	f.put_on_file(0, data);

	// Three iovecs, each starting where the previous one ends.
	iovec adjacent[3] = {{f.area.at(0), 4096}, {f.area.at(4096), 4096},
			     {f.area.at(8192), 4096}};
	block_io read = make_rw(block_op::read, 0, adjacent);
	CHECK(run_io(*f.engine, *f.queue, read) == 12288);
	CHECK(f.gate.last->opcode == IORING_OP_READ_FIXED);
	CHECK(f.gate.last->len == 12288);
	CHECK(std::equal(data.begin(), data.end(), f.area.at(0)));

	// The kernel hands out blocks wherever they are free: a hole between
	// two iovecs is not one range.
	std::fill(f.area.at(0), f.area.at(65536), 'X');
	iovec gap[2] = {{f.area.at(0), 4096}, {f.area.at(16384), 8192}};
	block_io split = make_rw(block_op::read, 0, gap);
	CHECK(run_io(*f.engine, *f.queue, split) == 12288);
	CHECK(f.gate.last->opcode == IORING_OP_READV);
	CHECK(std::equal(data.begin(), data.begin() + 4096, f.area.at(0)));
	CHECK(std::equal(data.begin() + 4096, data.end(), f.area.at(16384)));

	// Out of order (the second iovec lies before the first) is not one
	// range either, even though the two pages touch.
	std::vector<char> more = pattern(8192, 9);
	std::copy(more.begin(), more.begin() + 4096, f.area.at(36864));
	std::copy(more.begin() + 4096, more.end(), f.area.at(32768));
	iovec backwards[2] = {{f.area.at(36864), 4096}, {f.area.at(32768), 4096}};
	block_io write = make_rw(block_op::write, 65536, backwards);
	CHECK(run_io(*f.engine, *f.queue, write) == 8192);
	CHECK(f.gate.last->opcode == IORING_OP_WRITEV);
	CHECK(f.from_file(65536, 8192) == more);
	CHECK(f.fq().fixed_buffer_sqes() == 1);
}

TEST_CASE("a buffer outside the area uses the plain ops", "[file][fixed]")
{
	fixed_fixture f;
	std::vector<char> heap = pattern(4096, 1);
	iovec outside{heap.data(), heap.size()};
	block_io write = make_rw(block_op::write, 0, {&outside, 1});
	CHECK(run_io(*f.engine, *f.queue, write) == 4096);
	CHECK(f.gate.last->opcode == IORING_OP_WRITE);

	CHECK(f.fq().fixed_buffer_sqes() == 0);
}

TEST_CASE("a range running past the registered end uses the plain ops", "[file][fixed]")
{
	// Only the first half of the mapping is registered.
	fixed_fixture f(area_size / 2);
	std::vector<char> data = pattern(8192, 6);
	f.put_on_file(0, data);
	std::fill(f.area.at(0), f.area.at(area_size), 'X');
	// Its last page inside, the next one outside, adjacent all the same.
	iovec across[2] = {{f.area.at(area_size / 2 - 4096), 4096},
			   {f.area.at(area_size / 2), 4096}};
	block_io read = make_rw(block_op::read, 0, across);
	CHECK(run_io(*f.engine, *f.queue, read) == 8192);
	CHECK(f.gate.last->opcode == IORING_OP_READV);
	CHECK(std::equal(data.begin(), data.end(), f.area.at(area_size / 2 - 4096)));
	// One that ends exactly at the registered end is inside.
	iovec last{f.area.at(area_size / 2 - 8192), 8192};
	block_io read2 = make_rw(block_op::read, 0, {&last, 1});
	CHECK(run_io(*f.engine, *f.queue, read2) == 8192);
	CHECK(f.gate.last->opcode == IORING_OP_READ_FIXED);
	CHECK(f.fq().fixed_buffer_sqes() == 1);
}

TEST_CASE("a short fixed transfer is resumed, still fixed, and the data is right", "[file][fixed][short]")
{
	fixed_fixture f;
	std::vector<char> data = pattern(16384, 7);
	f.put_on_file(8192, data);
	rewrite_first cut{.first = 1000};
	f.fq().set_result_filter(rewrite_first::filter, &cut);
	std::fill(f.area.at(0), f.area.at(16384), 'X');
	iovec iov[2] = {{f.area.at(0), 8192}, {f.area.at(8192), 8192}};
	block_io read = make_rw(block_op::read, 8192, iov);
	CHECK(run_io(*f.engine, *f.queue, read) == 16384);
	CHECK(cut.seen == 2);
	CHECK(count_op(f.gate, IORING_OP_READ_FIXED) == 2);
	const io_uring_sqe &resumed = f.gate.sequence().back();
	CHECK(resumed.off == 8192 + 1000);
	CHECK(resumed.len == 16384 - 1000);
	CHECK(resumed.addr == reinterpret_cast<uintptr_t>(f.area.at(1000)));
	CHECK(std::equal(data.begin(), data.end(), f.area.at(0)));
}

TEST_CASE("a FUA write through a fixed buffer keeps RWF_DSYNC", "[file][fixed]")
{
	fixed_fixture f;
	std::vector<char> data = pattern(4096, 11);
	std::copy(data.begin(), data.end(), f.area.at(4096));
	iovec iov{f.area.at(4096), 4096};
	block_io write = make_rw(block_op::write, 0, {&iov, 1});
	write.fua = true;
	CHECK(run_io(*f.engine, *f.queue, write) == 4096);
	CHECK(f.gate.last->opcode == IORING_OP_WRITE_FIXED);
	CHECK(f.gate.last->rw_flags == RWF_DSYNC);
	CHECK(f.from_file(0, 4096) == data);
}

TEST_CASE("without registered buffers the queue never uses the fixed ops", "[file][fixed]")
{
	fixed_fixture f(0);
	CHECK_FALSE(f.fq().uses_fixed_buffers());
	CHECK(f.engine->fixed_buffers().size == 0);
	std::vector<char> data = pattern(8192, 2);
	std::copy(data.begin(), data.end(), f.area.at(0));
	iovec iov{f.area.at(0), 8192};
	block_io write = make_rw(block_op::write, 0, {&iov, 1});
	CHECK(run_io(*f.engine, *f.queue, write) == 8192);
	CHECK(f.gate.last->opcode == IORING_OP_WRITE);
	CHECK(f.from_file(0, 8192) == data);
}

namespace {

// In a child: without CAP_IPC_LOCK (checked when the io_uring is set up)
// and with RLIMIT_MEMLOCK 0 (when the buffers are) the kernel refuses the
// registration; the queue then serves through the plain ops.
// Returns the exit code: 0 when everything held, else which step failed.
int refused_registration_child()
{
	if (int rc = tcmud::test::drop_cap_ipc_lock())
		return rc;

	temp_file file(dev_size);
	area_map area(area_size);
	// Created first: this kernel may charge the rings themselves too.
	auto engine = uring_engine::create({});
	if (!engine)
		return 13;
	rlimit none{0, 0};
	if (setrlimit(RLIMIT_MEMLOCK, &none) != 0)
		return 12;
	auto reg = (*engine)->register_buffers({area.p, area.size});
	if (reg)
		return 14; // the kernel let it through: nothing tested
	if (reg.error().error != ENOMEM && reg.error().error != EPERM)
		return 15;
	if ((*engine)->fixed_buffers().size != 0)
		return 16;
	auto store = file_backstore::open(make_config(file.path(), dev_size));
	if (!store)
		return 17;
	gated_engine gate(**engine);
	auto opened = (*store)->open_queue(gate);
	if (!opened || static_cast<file_queue &>(**opened).uses_fixed_buffers())
		return 18;
	auto queue = std::move(*opened);
	std::vector<char> data = pattern(8192, 4);
	std::copy(data.begin(), data.end(), area.at(0));
	iovec iov{area.at(0), 8192};
	block_io write = make_rw(block_op::write, 0, {&iov, 1});
	recording_completion done;
	write.done = &done;
	queue->submit(write);
	const __kernel_timespec wait{.tv_sec = 5, .tv_nsec = 0};
	for (int round = 0; round < 100 && done.results.empty(); round++)
		if ((*engine)->run_once(1, &wait) < 0)
			return 19;
	if (done.results.size() != 1 || done.results[0] != 8192)
		return 20;
	if (gate.last->opcode != IORING_OP_WRITE)
		return 21;
	std::vector<char> all = file.read_all();
	if (!std::equal(data.begin(), data.end(), all.begin()))
		return 22;
	return 0;
}

} // namespace

TEST_CASE("a registration refused for RLIMIT_MEMLOCK leaves the plain ops working", "[file][fixed]")
{
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(refused_registration_child());
	int status = 0;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	REQUIRE(WIFEXITED(status));
	INFO("child exit code (the step that failed): " << WEXITSTATUS(status));
	CHECK(WEXITSTATUS(status) == 0);
}
