// SPDX-License-Identifier: GPL-2.0-or-later
// The queue worker end to end without a kernel: the in-process model of
// target_core_user's side of the ring queues commands, a socketpair stands
// in for /dev/uioN (the test writes to raise the "interrupt", the worker's
// 4-byte notify arrives back), and the real file backstore serves a temp
// file through the worker's own io_uring.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fcntl.h>
#include <thread>
#include <vector>

#include "handler_registry.h"
#include "core/queue_worker.h"
#include "kernel_ring_model.h"
#include "uio_standin.h"
#include "worker_rig.h"
#include "log/log.h"
#include "ring/tcmu_abi.h"
#include "tcmud/io_engine.h"

using namespace tcmud;
using tcmud::test::kernel_ring_model;

namespace {

constexpr uint32_t block = 512;
constexpr uint64_t blocks = 2048;

// One worker on the ring model over a scratch file (tests/support/worker_rig.h).
struct harness : tcmud::test::single_queue_rig {
	harness() : single_queue_rig(block, blocks, "file/test:") {}
};

std::vector<uint8_t> cdb10(uint8_t op, uint32_t lba, uint16_t count)
{
	return {op, 0, uint8_t(lba >> 24), uint8_t(lba >> 16), uint8_t(lba >> 8), uint8_t(lba),
		0, uint8_t(count >> 8), uint8_t(count), 0};
}

} // namespace

TEST_CASE("queue worker: a WRITE(10) then READ(10) round trip through the backing file")
{
	set_log_level(log_level::warn);
	harness h;
	std::vector<uint8_t> data(8 * block);
	for (size_t i = 0; i < data.size(); ++i)
		data[i] = uint8_t(i * 7 + 3);
	REQUIRE(h.model.queue_command(cdb10(0x2a, 100, 8), data));
	h.interrupt();
	h.collect(1);
	REQUIRE(h.model.completions()[0].scsi_status == 0);

	REQUIRE(h.model.queue_command(cdb10(0x28, 100, 8), {}, data.size()));
	h.interrupt();
	h.collect(2);
	const auto &rd = h.model.completions()[1];
	REQUIRE(rd.scsi_status == 0);
	REQUIRE(rd.data_in == data);
}

TEST_CASE("queue worker: an unknown opcode completes with ILLEGAL REQUEST and serving goes on")
{
	set_log_level(log_level::warn);
	harness h;
	REQUIRE(h.model.queue_command(std::vector<uint8_t>{0xc5, 0, 0, 0, 0, 0}));
	REQUIRE(h.model.queue_command(std::vector<uint8_t>{0x00, 0, 0, 0, 0, 0})); // TEST UNIT READY
	h.interrupt();
	h.collect(2);
	const auto &bad = h.model.completions()[0];
	REQUIRE(bad.scsi_status == 0x02);
	REQUIRE((bad.sense[2] & 0x0f) == 0x05);
	REQUIRE(bad.sense[12] == 0x20);
	REQUIRE(h.model.completions()[1].scsi_status == 0);
}

TEST_CASE("queue worker: a burst of commands is answered with fewer notifies than commands")
{
	set_log_level(log_level::warn);
	harness h;
	size_t queued = 0;
	for (uint32_t i = 0; i < 16; ++i)
		if (h.model.queue_command(cdb10(0x28, i * 8, 1), {}, block))
			++queued;
	REQUIRE(queued >= 8);
	h.interrupt();
	size_t notifies = h.collect(queued);
	for (const auto &c : h.model.completions())
		REQUIRE(c.scsi_status == 0);
	// One interrupt, one io_uring batch: completions are published together.
	CHECK(notifies < queued);
	REQUIRE(h.worker->stats().commands.load() == queued);
	REQUIRE(h.worker->stats().doorbells.load() == notifies);
}

TEST_CASE("queue worker: each interrupt is served without reading uio's count")
{
	// The doorbell's multishot poll posts a CQE per wake-up, so the worker
	// does not read() the count: one syscall less per round. Every round
	// must still be served; the count stays unread on the worker's end.
	set_log_level(log_level::warn);
	harness h;
	for (uint32_t round = 0; round < 40; ++round) {
		REQUIRE(h.model.queue_command(cdb10(0x28, round * 8, 1), {}, block));
		REQUIRE(write(h.sv[1], &round, sizeof(round)) == sizeof(round));
		h.collect(round + 1);
		uint32_t seen = ~0u;
		REQUIRE(recv(h.sv[0], &seen, sizeof(seen), MSG_PEEK | MSG_DONTWAIT) == sizeof(seen));
		REQUIRE(seen == round);
		// Dropped here as uio would overwrite it (uio_standin.h).
		REQUIRE(recv(h.sv[0], &seen, sizeof(seen), MSG_DONTWAIT) == sizeof(seen));
	}
	REQUIRE(h.worker->stats().commands.load() == 40);
}

TEST_CASE("queue worker: an entry whose iovec points outside the data area fails with sense, the next command is served")
{
	set_log_level(log_level::error);
	harness h;
	REQUIRE(h.model.queue_command(cdb10(0x28, 0, 1), {}, block));
	// iov[0].iov_base of that entry: hdr(8) + iov_cnt/bidi/dif(12) + cdb_off(8) + pads(16).
	uint64_t entry = h.model.cmdr_off() + h.model.last_entry_pos();
	h.model.poke_u64(entry + 44, h.model.mapping().size() + 4096);
	REQUIRE(h.model.queue_command(cdb10(0x28, 8, 1), {}, block));
	h.interrupt();
	h.collect(2);
	const auto &bad = h.model.completions()[0];
	REQUIRE(bad.scsi_status == 0x02);
	REQUIRE((bad.sense[2] & 0x0f) == 0x04); // HARDWARE ERROR
	REQUIRE(bad.sense[12] == 0x44);         // internal target failure
	REQUIRE(h.model.completions()[1].scsi_status == 0);
	REQUIRE(h.worker->stats().malformed.load() == 1);
}

TEST_CASE("queue worker: a malformed entry's sense is in the format D_SENSE asks for")
{
	set_log_level(log_level::error);
	harness h;
	h.unit.lu->set_descriptor_sense(true);
	REQUIRE(h.model.queue_command(cdb10(0x28, 0, 1), {}, block));
	uint64_t entry = h.model.cmdr_off() + h.model.last_entry_pos();
	h.model.poke_u64(entry + 44, h.model.mapping().size() + 4096);
	h.interrupt();
	h.collect(1);
	const auto &bad = h.model.completions()[0];
	REQUIRE(bad.scsi_status == 0x02);
	REQUIRE(bad.sense[0] == 0x72);          // descriptor format, current
	REQUIRE((bad.sense[1] & 0x0f) == 0x04); // HARDWARE ERROR
	REQUIRE(bad.sense[2] == 0x44);          // internal target failure
}

namespace {

// A backstore whose reads and writes stay in flight until the test lets them
// go: each becomes a 1-byte io_uring read from a pipe on the worker's own
// io_uring, so it completes, on the worker's thread, once the test writes a
// byte. That makes "a command in flight when stop() is called" certain.
class held_store final : public backstore {
public:
	held_store() { REQUIRE(pipe2(fds_, O_CLOEXEC) == 0); }
	~held_store() override
	{
		close(fds_[0]);
		close(fds_[1]);
	}
	uint64_t size_bytes() const override { return blocks * block; }
	backstore_caps caps() const override { return {}; }
	setup_result<std::unique_ptr<backstore_queue>> open_queue(io_engine &engine) override
	{
		return std::make_unique<queue>(*this, engine);
	}
	// Lets n held requests complete (successfully).
	void release(size_t n)
	{
		std::vector<char> bytes(n, 'x');
		REQUIRE(write(fds_[1], bytes.data(), n) == ssize_t(n));
	}
	std::atomic<size_t> submitted{0};

private:
	struct held final : io_completion {
		block_io *io = nullptr;
		char byte = 0;
		void io_done(int64_t result) override
		{
			io->done->io_done(result < 0 ? result : int64_t(io->length));
		}
	};
	class queue final : public backstore_queue {
	public:
		queue(held_store &store, io_engine &engine) : store_(store), engine_(engine) {}
		void submit(block_io &io) override
		{
			// Owned by the store, which outlives the worker: the engine
			// may still hold these reads when the worker ends.
			store_.held_.push_back(std::make_unique<held>());
			held &h = *store_.held_.back();
			h.io = &io;
			io_uring_sqe *sqe = engine_.get_sqe(&h);
			if (!sqe) {
				io.done->io_done(-EAGAIN);
				return;
			}
			io_uring_prep_read(sqe, store_.fds_[0], &h.byte, 1, uint64_t(-1));
			store_.submitted.fetch_add(1);
		}

	private:
		held_store &store_;
		io_engine &engine_;
	};

	int fds_[2] = {-1, -1};
	std::vector<std::unique_ptr<held>> held_; // the worker's thread only
};

struct held_harness {
	kernel_ring_model model;
	int sv[2] = {-1, -1};
	held_store store;
	std::unique_ptr<scsi::logical_unit> lu;
	std::unique_ptr<queue_worker> worker;

	held_harness()
	{
		REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
		REQUIRE(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
		scsi::logical_unit_config lc;
		lc.block_size = block;
		lc.num_blocks = blocks;
		auto created = scsi::logical_unit::create(std::move(lc));
		REQUIRE(created.ok());
		lu = std::move(*created);
		queue_params qp;
		qp.map = model.mapping();
		qp.uio = uio_channel(sv[0]);
		qp.log_prefix = "held/test:";
		qp.lu = lu.get();
		qp.store = &store;
		qp.ring.max_in_flight = 32;
		worker = std::make_unique<queue_worker>(qp);
		REQUIRE(worker->start());
	}
	~held_harness()
	{
		worker.reset();
		close(sv[0]);
		close(sv[1]);
	}
	void interrupt() { REQUIRE(test::raise_uio_interrupt(sv[0], sv[1], 1)); }
	void wait_submitted(size_t n)
	{
		auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
		while (store.submitted.load() < n) {
			REQUIRE(std::chrono::steady_clock::now() < deadline);
			std::this_thread::sleep_for(std::chrono::milliseconds(5));
		}
	}
};

} // namespace

TEST_CASE("queue worker: stop() returns only after the commands in flight are answered; "
	  "entries queued after the stop stay in the ring for the next daemon")
{
	set_log_level(log_level::error);
	held_harness h;
	for (uint32_t i = 0; i < 4; ++i)
		REQUIRE(h.model.queue_command(cdb10(0x28, i, 1), {}, block));
	h.interrupt();
	h.wait_submitted(4);
	// Let the worker's drain loop end and wait on its four reads.
	std::this_thread::sleep_for(std::chrono::milliseconds(100));
	// Queued with no interrupt: the stop must not fetch them.
	REQUIRE(h.model.queue_command(cdb10(0x28, 8, 1), {}, block));
	REQUIRE(h.model.queue_command(cdb10(0x28, 9, 1), {}, block));

	std::atomic<bool> stopped{false};
	std::thread stopper([&] {
		h.worker->stop(10000);
		stopped = true;
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	CHECK_FALSE(stopped.load()); // still draining: four commands in flight
	h.store.release(4);
	stopper.join();

	REQUIRE(h.model.handle_completions() == 4);
	for (const auto &c : h.model.completions())
		REQUIRE(c.scsi_status == 0);
	REQUIRE(h.model.in_flight() == 2);
	REQUIRE(h.store.submitted.load() == 4);
	REQUIRE(h.worker->stats().commands.load() == 4);
	REQUIRE_FALSE(h.model.broken());
}

TEST_CASE("queue worker: stop() gives up on a command that outlives its drain timeout")
{
	set_log_level(log_level::error);
	held_harness h;
	REQUIRE(h.model.queue_command(cdb10(0x28, 0, 1), {}, block));
	h.interrupt();
	h.wait_submitted(1);
	auto t0 = std::chrono::steady_clock::now();
	h.worker->stop(200);
	auto waited = std::chrono::steady_clock::now() - t0;
	CHECK(waited >= std::chrono::milliseconds(200));
	CHECK(waited < std::chrono::seconds(5));
	// Unanswered: the next daemon's ring reset answers it BUSY.
	REQUIRE(h.model.handle_completions() == 0);
	REQUIRE(h.model.in_flight() == 1);
}

namespace {

// A backstore that cannot open a queue (as rbd's cannot without its handle).
class refusing_store final : public backstore {
public:
	uint64_t size_bytes() const override { return blocks * block; }
	backstore_caps caps() const override { return {}; }
	setup_result<std::unique_ptr<backstore_queue>> open_queue(io_engine &) override
	{
		return setup_error{ENOSPC, "no queue for you"};
	}
};

// start()'s refusal of a worker on `model`'s ring as queue 3.
setup_error start_error(kernel_ring_model &model, backstore &store)
{
	scsi::logical_unit_config lc;
	lc.block_size = block;
	lc.num_blocks = blocks;
	auto lu = scsi::logical_unit::create(std::move(lc));
	REQUIRE(lu.ok());
	int sv[2];
	REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	queue_params qp;
	qp.map = model.mapping();
	qp.uio = uio_channel(sv[0]);
	qp.queue_index = 3;
	qp.log_prefix = "file/test:";
	qp.lu = lu->get();
	qp.store = &store;
	queue_worker worker(qp);
	auto started = worker.start();
	close(sv[0]);
	close(sv[1]);
	REQUIRE_FALSE(started);
	return started.error();
}

} // namespace

TEST_CASE("queue worker: start() on a bad mailbox says which queue and why")
{
	set_log_level(log_level::error);
	kernel_ring_model model;
	model.poke_u32(TCMUD_MB_VERSION_OFF, 1);
	refusing_store store;
	setup_error e = start_error(model, store);
	CHECK(e.error == EPROTO);
	CHECK(e.what() == "queue 3: unusable mailbox: mailbox version is not 2: Protocol error");
}

TEST_CASE("queue worker: start() fails with the backstore's own reason, naming the queue")
{
	set_log_level(log_level::error);
	kernel_ring_model model;
	refusing_store store;
	setup_error e = start_error(model, store);
	CHECK(e.error == ENOSPC);
	CHECK(e.what() == "queue 3: no queue for you: No space left on device");
}
