// SPDX-License-Identifier: GPL-2.0-or-later
// file_queue data path against real files through a real io_uring: what the
// SCSI layer's READ, WRITE (FUA), SYNCHRONIZE CACHE, UNMAP and WRITE SAME
// turn into.
#include <cstdlib>

#include "file_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

constexpr uint64_t dev_size = 1 << 20;

std::vector<char> pattern(size_t len, unsigned seed)
{
	std::vector<char> data(len);
	for (size_t i = 0; i < len; i++)
		data[i] = static_cast<char>((i * 31 + seed) & 0xff);
	return data;
}

// Writes `data` at offset through the queue as one iovec.
void write_through(uring_engine &engine, backstore_queue &queue, uint64_t offset,
		   std::vector<char> &data)
{
	iovec iov{data.data(), data.size()};
	block_io io = make_rw(block_op::write, offset, {&iov, 1});
	REQUIRE(run_io(engine, queue, io) == static_cast<int64_t>(data.size()));
}

std::vector<char> read_through(uring_engine &engine, backstore_queue &queue,
			       uint64_t offset, size_t len)
{
	std::vector<char> data(len, 'X');
	iovec iov{data.data(), data.size()};
	block_io io = make_rw(block_op::read, offset, {&iov, 1});
	REQUIRE(run_io(engine, queue, io) == static_cast<int64_t>(len));
	return data;
}

struct queue_fixture {
	temp_file file{dev_size};
	std::unique_ptr<uring_engine> engine = make_engine();
	gated_engine gate{*engine};
	std::unique_ptr<backstore> store;
	std::unique_ptr<backstore_queue> queue;

	explicit queue_fixture(const std::string &options = "")
	{
		store = open_store(file.path() + options, dev_size);
		queue = std::move(*store->open_queue(gate));
	}
};

} // namespace

TEST_CASE("a multi-iovec write reads back through another iovec layout", "[file][io]")
{
	queue_fixture f;
	std::vector<char> data = pattern(4096, 7);
	iovec out[3] = {{data.data(), 512}, {data.data() + 512, 1536},
			{data.data() + 2048, 2048}};
	block_io write = make_rw(block_op::write, 8192, out);
	CHECK(run_io(*f.engine, *f.queue, write) == 4096);

	std::vector<char> back(4096, 'X');
	iovec in[2] = {{back.data(), 1000}, {back.data() + 1000, 3096}};
	block_io read = make_rw(block_op::read, 8192, in);
	CHECK(run_io(*f.engine, *f.queue, read) == 4096);
	CHECK(back == data);
	CHECK(f.gate.last->opcode == IORING_OP_READV);
}

TEST_CASE("a single-buffer request uses READ/WRITE rather than the vectored ops", "[file][io]")
{
	queue_fixture f;
	std::vector<char> data = pattern(4096, 1);
	write_through(*f.engine, *f.queue, 0, data);
	CHECK(f.gate.last->opcode == IORING_OP_WRITE);
	CHECK(read_through(*f.engine, *f.queue, 0, 4096) == data);
	CHECK(f.gate.last->opcode == IORING_OP_READ);
}

TEST_CASE("the queue submits on the registered fixed file", "[file][io]")
{
	queue_fixture f;
	auto &queue = static_cast<file_queue &>(*f.queue);
	REQUIRE(queue.uses_fixed_file());
	std::vector<char> data = pattern(512, 2);
	write_through(*f.engine, *f.queue, 0, data);
	CHECK((f.gate.last->flags & IOSQE_FIXED_FILE));
}

TEST_CASE("a FUA write is submitted with RWF_DSYNC and an ordinary one without", "[file][io]")
{
	queue_fixture f;
	std::vector<char> data = pattern(4096, 3);
	iovec iov{data.data(), data.size()};
	block_io plain = make_rw(block_op::write, 0, {&iov, 1});
	CHECK(run_io(*f.engine, *f.queue, plain) == 4096);
	CHECK(f.gate.last->rw_flags == 0);

	block_io fua = make_rw(block_op::write, 4096, {&iov, 1});
	fua.fua = true;
	CHECK(run_io(*f.engine, *f.queue, fua) == 4096);
	CHECK(f.gate.last->rw_flags == RWF_DSYNC);
	CHECK(read_through(*f.engine, *f.queue, 4096, 4096) == data);
}

TEST_CASE("flush is an fdatasync through the ring and succeeds", "[file][io]")
{
	queue_fixture f;
	block_io flush = make_range(block_op::flush, 0, 0);
	CHECK(run_io(*f.engine, *f.queue, flush) == 0);
	CHECK(f.gate.last->opcode == IORING_OP_FSYNC);
	CHECK(f.gate.last->fsync_flags == IORING_FSYNC_DATASYNC);
}

TEST_CASE("discard deallocates the range and it reads back as zeroes", "[file][io]")
{
	queue_fixture f;
	std::vector<char> data = pattern(256 << 10, 4);
	write_through(*f.engine, *f.queue, 0, data);
	REQUIRE(fsync(open(f.file.path().c_str(), O_RDONLY | O_CLOEXEC)) == 0);
	uint64_t before = f.file.allocated_bytes();

	block_io discard = make_range(block_op::discard, 64 << 10, 128 << 10);
	CHECK(run_io(*f.engine, *f.queue, discard) == 0);
	CHECK(f.gate.last->opcode == IORING_OP_FALLOCATE);

	std::vector<char> back = read_through(*f.engine, *f.queue, 0, 256 << 10);
	CHECK(std::equal(back.begin(), back.begin() + (64 << 10), data.begin()));
	CHECK(std::all_of(back.begin() + (64 << 10), back.begin() + (192 << 10),
			  [](char c) { return c == 0; }));
	CHECK(std::equal(back.begin() + (192 << 10), back.end(), data.begin() + (192 << 10)));
	CHECK(f.file.allocated_bytes() < before);
	CHECK(f.file.size() == dev_size);
}

TEST_CASE("write_zeroes zeroes exactly the range", "[file][io]")
{
	queue_fixture f;
	std::vector<char> data = pattern(16384, 5);
	write_through(*f.engine, *f.queue, 0, data);
	block_io zero = make_range(block_op::write_zeroes, 4096, 8192);
	CHECK(run_io(*f.engine, *f.queue, zero) == 0);
	std::vector<char> back = read_through(*f.engine, *f.queue, 0, 16384);
	std::vector<char> expected = data;
	std::fill(expected.begin() + 4096, expected.begin() + 12288, 0);
	CHECK(back == expected);
	CHECK(f.file.size() == dev_size);
}

TEST_CASE("O_DIRECT round trip with aligned buffers", "[file][io]")
{
	queue_fixture f(";direct=1");
	const size_t len = 64 << 10;
	auto *out = static_cast<char *>(aligned_alloc(4096, len));
	auto *in = static_cast<char *>(aligned_alloc(4096, len));
	std::vector<char> data = pattern(len, 6);
	std::copy(data.begin(), data.end(), out);
	iovec wv[2] = {{out, len / 2}, {out + len / 2, len / 2}};
	block_io write = make_rw(block_op::write, 4096, wv);
	CHECK(run_io(*f.engine, *f.queue, write) == static_cast<int64_t>(len));
	iovec rv{in, len};
	block_io read = make_rw(block_op::read, 4096, {&rv, 1});
	CHECK(run_io(*f.engine, *f.queue, read) == static_cast<int64_t>(len));
	CHECK(std::equal(in, in + len, data.begin()));
	std::vector<char> on_disk = f.file.read_all();
	CHECK(std::equal(data.begin(), data.end(), on_disk.begin() + 4096));
	free(out);
	free(in);
}

TEST_CASE("a zero-length read completes with 0", "[file][io]")
{
	queue_fixture f;
	block_io io = make_rw(block_op::read, 0, {});
	CHECK(run_io(*f.engine, *f.queue, io) == 0);
}

TEST_CASE("large buffered transfers go to io_uring's async workers, small ones stay inline", "[file][io]")
{
	queue_fixture f;
	// open_queue of a buffered (not O_DIRECT) store sets the threshold.
	std::vector<char> big = pattern(65536, 4);
	write_through(*f.engine, *f.queue, 0, big);
	CHECK((f.gate.last->flags & IOSQE_ASYNC));
	CHECK(read_through(*f.engine, *f.queue, 0, 65536) == big);
	CHECK((f.gate.last->flags & IOSQE_ASYNC));
	std::vector<char> small = pattern(4096, 5);
	write_through(*f.engine, *f.queue, 0, small);
	CHECK_FALSE((f.gate.last->flags & IOSQE_ASYNC));
	CHECK(read_through(*f.engine, *f.queue, 0, 4096) == small);
	CHECK_FALSE((f.gate.last->flags & IOSQE_ASYNC));
}

// F1 (issue 14): fallocate has no RWF_DSYNC, so a FUA discard or
// write-zeroes (WRITE SAME / UNMAP with the write cache off) must be
// followed by an fdatasync before it completes; otherwise GOOD goes out
// while the deallocation may still be lost in a crash.
TEST_CASE("a FUA discard or write-zeroes is FALLOCATE then FSYNC(DATASYNC), completed once",
	  "[file][io][fua]")
{
	for (block_op op : {block_op::discard, block_op::write_zeroes}) {
		for (bool fua : {false, true}) {
			queue_fixture f;
			block_io io = make_range(op, 64 << 10, 64 << 10);
			io.fua = fua;
			CHECK(run_io(*f.engine, *f.queue, io) == 0);
			const auto &seq = f.gate.sequence();
			REQUIRE(seq.size() == (fua ? 2u : 1u));
			CHECK(seq[0].opcode == IORING_OP_FALLOCATE);
			if (fua) {
				CHECK(seq[1].opcode == IORING_OP_FSYNC);
				CHECK(seq[1].fsync_flags == IORING_FSYNC_DATASYNC);
			}
		}
	}
}

TEST_CASE("a failed FUA discard is not followed by a sync and reports the error", "[file][io][fua]")
{
	queue_fixture f;
	// Past the device: refused before anything reaches the file.
	block_io io = make_range(block_op::discard, dev_size, 4096);
	io.fua = true;
	CHECK(run_io(*f.engine, *f.queue, io) == -EINVAL);
	for (const io_uring_sqe &sqe : f.gate.sequence())
		CHECK(sqe.opcode != IORING_OP_FSYNC);
}
