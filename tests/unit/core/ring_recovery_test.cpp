// SPDX-License-Identifier: GPL-2.0-or-later
// Issue 14 F2 and F3 on the queue worker over the kernel ring model:
// - the kernel resets the ring (action/reset_ring) while a command's I/O is
//   held in the worker's io_uring; the next command gets the same cmd_id,
//   ring position and data block. The old command's late result is
//   dropped, and since its late I/O may write the new command's data
//   block, the new command is not served: nothing is fetched until that
//   I/O ends, then tcmud resets the ring so the kernel answers what was
//   queued meanwhile BUSY (issue 41 item 1);
// - a ring the worker finds broken is reset through the device's hook and
//   served again; reset by the kernel on its own while broken, with the tail
//   at 0 (where the reset leaves it) and a command in flight, it is served
//   again too, the late result dropped;
// - a stop whose drain gives up leaves the buffers of I/O still in flight
//   allocated (a late write must still send the command's data).
#include <catch2/catch.hpp>

#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/queue_worker.h"
#include "held_backstore.h"
#include "kernel_mq_model.h"
#include "kernel_ring_model.h"
#include "log/log.h"
#include "worker_rig.h"

using namespace tcmud;
using tcmud::test::held_backstore;
using tcmud::test::kernel_ring_model;
using tcmud::test::single_queue_rig;

namespace {

constexpr uint32_t block = 512;
constexpr uint64_t blocks = 256;

std::vector<uint8_t> cdb10(uint8_t op, uint32_t lba, uint16_t count)
{
	return {op, 0, uint8_t(lba >> 24), uint8_t(lba >> 16), uint8_t(lba >> 8), uint8_t(lba),
		0, uint8_t(count >> 8), uint8_t(count), 0};
}

template <typename Pred>
bool wait_for(Pred done, std::chrono::milliseconds limit = std::chrono::seconds(10))
{
	auto deadline = std::chrono::steady_clock::now() + limit;
	while (!done()) {
		if (std::chrono::steady_clock::now() > deadline)
			return false;
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
	}
	return true;
}

// A worker on held_backstore whose reset_ring hook does what tcmu_device's
// does through configfs, on the model (the kernel handles the completions
// the uio write announced, then resets the ring), and counts the resets.
struct held_rig_with_resets {
	kernel_ring_model *model = nullptr;
	single_queue_rig h;
	held_rig_with_resets(held_backstore &store, const std::string &prefix,
			     std::atomic<int> &resets)
		: h(block, blocks, prefix, [&, this](queue_params &qp) {
			  qp.store = &store;
			  qp.reset_ring = [this, &resets] {
				  model->handle_completions();
				  model->reset_ring();
				  resets++;
				  return 0;
			  };
		  })
	{
		model = &h.model;
	}
};

} // namespace

TEST_CASE("F2: after a kernel-side ring reset, a late READ of a failed command never "
	  "lands in a new WRITE that is then answered GOOD", "[ring-reset]")
{
	// Issue 41 item 1, as reproduced: a READ of LBA 5 held in flight, the
	// ring reset, a new WRITE of LBA 9 given the same data block, the late
	// READ lands in it. Served, LBA 9 would get LBA 5's bytes, and GOOD.
	set_log_level(log_level::error);
	held_backstore store(blocks * block);
	std::fill_n(store.bytes().begin() + 5 * block, block, 0x55);
	std::fill_n(store.bytes().begin() + 9 * block, block, 0x99);
	std::atomic<int> our_resets{0};
	held_rig_with_resets r(store, "held/reset:", our_resets);
	single_queue_rig &h = r.h;

	store.hold(true);
	auto old_id = h.model.queue_command(cdb10(0x28, 5, 1), {}, block);
	REQUIRE(old_id);
	h.interrupt();
	REQUIRE(wait_for([&] { return store.held() == 1; }));
	const iovec old_buf = store.held_buffers()[0][0];

	// action/reset_ring: the kernel fails the READ itself and starts the
	// ring over; its next command, a WRITE, gets the same id, position
	// and data block.
	h.model.reset_ring();
	auto new_id = h.model.queue_command(cdb10(0x2a, 9, 1), std::vector<uint8_t>(block, 0x77), 0);
	REQUIRE(new_id == old_id);
	h.interrupt();
	REQUIRE(wait_for([&] { return h.worker->stats().ring_resets.load() == 1; }));
	// Nothing is fetched while the old I/O may still write the data area.
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	CHECK(store.held() == 1);

	// The old READ ends now and lands in the WRITE's data block.
	store.release(0);
	REQUIRE(wait_for([&] { return our_resets.load() == 1; }));
	const auto *landed = static_cast<const uint8_t *>(old_buf.iov_base);
	CHECK(std::all_of(landed, landed + block, [](uint8_t b) { return b == 0x55; }));
	CHECK(h.worker->stats().stale_results.load() == 1);
	// The WRITE was never served: the kernel answered it BUSY in the reset
	// tcmud asked for, and the initiator retries it.
	CHECK(h.model.handle_completions() == 0);
	CHECK(std::all_of(store.bytes().begin() + 9 * block, store.bytes().begin() + 10 * block,
			  [](uint8_t b) { return b == 0x99; }));
	CHECK_FALSE(h.model.broken());

	// The retried WRITE is served with its own data.
	store.hold(false);
	REQUIRE(h.model.queue_command(cdb10(0x2a, 9, 1), std::vector<uint8_t>(block, 0x77), 0));
	h.interrupt();
	h.collect(1);
	CHECK(h.model.completions()[0].scsi_status == 0);
	CHECK(std::all_of(store.bytes().begin() + 9 * block, store.bytes().begin() + 10 * block,
			  [](uint8_t b) { return b == 0x77; }));
	REQUIRE(h.model.queue_command(cdb10(0x28, 9, 1), {}, block));
	h.interrupt();
	h.collect(2);
	CHECK(h.model.completions()[1].data_in == std::vector<uint8_t>(block, 0x77));
}

TEST_CASE("F2: a ring reset seen only when the old command is answered drops its result "
	  "and retries what was queued meanwhile", "[ring-reset]")
{
	// As above, but the worker hears of nothing between the reset and the
	// old command's end (no doorbell): the check before an answer is
	// written must see that the entry is the kernel's new one.
	set_log_level(log_level::error);
	held_backstore store(blocks * block);
	std::fill_n(store.bytes().begin() + 5 * block, block, 0x55);
	std::fill_n(store.bytes().begin() + 9 * block, block, 0x99);
	std::atomic<int> our_resets{0};
	held_rig_with_resets r(store, "held/reset-late:", our_resets);
	single_queue_rig &h = r.h;

	store.hold(true);
	auto old_id = h.model.queue_command(cdb10(0x28, 5, 1), {}, block);
	REQUIRE(old_id);
	h.interrupt();
	REQUIRE(wait_for([&] { return store.held() == 1; }));

	h.model.reset_ring();
	auto new_id = h.model.queue_command(cdb10(0x28, 9, 1), {}, block);
	REQUIRE(new_id == old_id);
	store.release(0);
	REQUIRE(wait_for([&] { return h.worker->stats().stale_results.load() == 1; }));
	REQUIRE(wait_for([&] { return our_resets.load() == 1; }));
	CHECK(h.model.handle_completions() == 0);
	CHECK(h.worker->stats().ring_resets.load() == 2); // the kernel's, then ours

	// The READ queued meanwhile went back BUSY; retried, it is served.
	store.hold(false);
	REQUIRE(h.model.queue_command(cdb10(0x28, 9, 1), {}, block));
	h.interrupt();
	h.collect(1);
	CHECK(h.model.completions()[0].scsi_status == 0);
	CHECK(h.model.completions()[0].data_in == std::vector<uint8_t>(block, 0x99));
	CHECK_FALSE(h.model.broken());
}

TEST_CASE("F2: a ring the worker finds broken is reset through the device and served again",
	  "[ring-reset]")
{
	set_log_level(log_level::error);
	std::atomic<int> resets{0};
	kernel_ring_model *model = nullptr;
	single_queue_rig h(block, blocks, "file/broken:", [&](queue_params &qp) {
		// What tcmu_device's hook does through configfs, on the model:
		// runs on the worker's thread, while the test only waits.
		qp.reset_ring = [&] {
			model->reset_ring();
			resets++;
			return 0;
		};
	});
	model = &h.model;
	REQUIRE(h.model.queue_command(cdb10(0x28, 0, 1), {}, block));
	h.interrupt();
	h.collect(1);

	h.model.set_cmd_head(h.model.cmd_head() + 3); // framing lost
	h.interrupt();
	REQUIRE(wait_for([&] { return resets.load() == 1; }));

	REQUIRE(h.model.queue_command(cdb10(0x28, 1, 1), {}, block));
	h.interrupt();
	h.collect(2);
	CHECK(h.model.completions()[1].scsi_status == 0);
	CHECK(h.worker->stats().ring_resets.load() == 1);
}

TEST_CASE("F2: a kernel-side reset of a ring already broken, with the tail at 0 and a "
	  "command in flight, is seen and the late result dropped", "[ring-reset]")
{
	set_log_level(log_level::error);
	held_backstore store(blocks * block);
	std::fill_n(store.bytes().begin() + 9 * block, block, 0x99);
	std::atomic<int> our_resets{0};
	std::atomic<bool> kernel_broke{false};
	kernel_ring_model *model = nullptr;
	single_queue_rig h(block, blocks, "held/broken-reset:", [&](queue_params &qp) {
		qp.store = &store;
		qp.reset_ring = [&] {
			// The kernel handles completions inside the uio write
			// that announced them, before this reset could come.
			model->handle_completions();
			if (model->broken())
				kernel_broke = true;
			model->reset_ring();
			our_resets++;
			return 0;
		};
	});
	model = &h.model;

	// A READ at ring position 0 is held: the tail stays at 0.
	store.hold(true);
	REQUIRE(h.model.queue_command(cdb10(0x28, 5, 1), {}, block));
	h.interrupt();
	REQUIRE(wait_for([&] { return store.held() == 1; }));
	// The next entry has a bad opcode: framing lost, the ring is broken
	// (cmd_head stays valid, behind it).
	REQUIRE(h.model.queue_command(cdb10(0x28, 6, 1), {}, block));
	uint64_t at = h.model.cmdr_off() + h.model.last_entry_pos();
	uint32_t len_op;
	std::memcpy(&len_op, h.model.mapping().data() + at, sizeof(len_op));
	h.model.poke_u32(at, (len_op & ~7u) | 5u);
	h.interrupt();
	REQUIRE(wait_for([&] { return h.worker->stats().malformed.load() == 1; }));

	// An administrator's action/reset_ring, which tells no one: head and
	// tail 0 (the tail was 0 already), entries left as they are.
	h.model.reset_ring();
	// The READ ends: it is not the kernel's any more. Written into the
	// ring, its answer would sit in a stale entry with a cmd_id the
	// kernel no longer knows.
	store.release(0);
	CHECK(wait_for([&] { return h.worker->stats().stale_results.load() == 1; }));
	CHECK(h.model.handle_completions() == 0);
	CHECK_FALSE(h.model.broken());
	CHECK_FALSE(kernel_broke.load());
	// The kernel's reset, then ours once the READ's I/O had ended, for
	// whatever the kernel queued while it ran.
	CHECK(wait_for([&] { return our_resets.load() == 1; }));
	CHECK(h.worker->stats().ring_resets.load() == 2);

	// And the ring serves again, from position 0.
	store.hold(false);
	REQUIRE(h.model.queue_command(cdb10(0x28, 9, 1), {}, block));
	h.interrupt();
	h.collect(1);
	CHECK(h.model.completions()[0].scsi_status == 0);
	CHECK(h.model.completions()[0].data_in == std::vector<uint8_t>(block, 0x99));
}

TEST_CASE("F3: a stop whose drain gives up keeps the buffers of I/O still in flight",
	  "[drain]")
{
	set_log_level(log_level::error);
	held_backstore store(blocks * block);
	single_queue_rig h(block, blocks, "held/stuck:",
			   [&](queue_params &qp) { qp.store = &store; });
	// WRITE SAME(10) of a pattern: the write goes out of the command's
	// own buffer (the bounce), not the ring's data area.
	std::vector<uint8_t> pattern(block);
	for (size_t i = 0; i < pattern.size(); ++i)
		pattern[i] = uint8_t(i * 13 + 1);
	store.hold(true);
	std::vector<uint8_t> write_same{0x41, 0, 0, 0, 0, 20, 0, 0, 4, 0};
	REQUIRE(h.model.queue_command(write_same, pattern));
	h.interrupt();
	REQUIRE(wait_for([&] { return store.held() == 1; }));
	auto held = store.held_buffers();
	REQUIRE(held.size() == 1);
	REQUIRE(held[0].size() == 4);
	auto *buf = static_cast<const uint8_t *>(held[0][0].iov_base);
	REQUIRE(std::memcmp(buf, pattern.data(), block) == 0);

	h.worker->stop(200); // the backing I/O hangs past the drain timeout
	CHECK(h.worker->abandoned());
	h.worker.reset();

	// Churn the heap: freed command buffers would be reused (and written)
	// here. What the stuck write still sends must be the command's data.
	// On a new thread: the worker allocated its slots in its thread's
	// malloc arena, which glibc hands to the next thread that starts.
	std::vector<std::unique_ptr<uint8_t[]>> churn;
	std::thread([&] {
		for (size_t size : {size_t(64), size_t(block), size_t(4096), size_t(16384)}) {
			for (int i = 0; i < 256; ++i) {
				churn.emplace_back(new uint8_t[size]);
				std::memset(churn.back().get(), 0xee, size);
			}
		}
	}).join();
	CHECK(std::memcmp(buf, pattern.data(), block) == 0);
}

TEST_CASE("F2: on the multi-queue kernel, a reset tcmud starts waits for every queue's "
	  "commands in flight", "[ring-reset]")
{
	// reset_ring resets every ring of the device: the READ running on
	// queue 1 would become stale and its late data land in a new
	// command's block. So the broken ring of queue 0 is reset only once
	// queue 1 has answered its READ, and that READ is answered GOOD.
	set_log_level(log_level::error);
	held_backstore store(blocks * block);
	std::fill_n(store.bytes().begin() + 7 * block, block, 0x77);
	tcmud::test::scratch_unit unit(block, blocks);
	tcmud::test::kernel_mq_model model(2);
	std::atomic<int> resets{0};
	auto barrier = std::make_shared<reset_barrier>([&] {
		for (unsigned q = 0; q < 2; ++q) {
			model.ring(q).handle_completions();
			model.ring(q).reset_ring();
		}
		resets++;
		return 0;
	});
	std::vector<std::unique_ptr<queue_worker>> workers;
	for (unsigned q = 0; q < 2; ++q) {
		queue_params qp;
		qp.map = model.ring(q).mapping();
		qp.uio = uio_channel(model.uio_fd(q));
		qp.queue_index = q;
		qp.log_prefix = "held/mq-reset:";
		qp.lu = unit.lu.get();
		qp.store = &store;
		qp.ring.max_in_flight = 8;
		qp.resets = barrier;
		workers.push_back(std::make_unique<queue_worker>(qp));
		REQUIRE(workers.back()->start());
	}

	store.hold(true);
	auto read = model.submit(1, cdb10(0x28, 7, 1), {}, block);
	REQUIRE(read);
	REQUIRE(read->queue == 1);
	model.notify(1);
	REQUIRE(wait_for([&] { return store.held() == 1; }));

	// Queue 0's next entry has a bad opcode: its ring breaks.
	auto bad = model.submit(0, cdb10(0x28, 0, 1), {}, block);
	REQUIRE(bad);
	auto &ring0 = model.ring(0);
	uint64_t at = ring0.cmdr_off() + ring0.last_entry_pos();
	uint32_t len_op;
	std::memcpy(&len_op, ring0.mapping().data() + at, sizeof(len_op));
	ring0.poke_u32(at, (len_op & ~7u) | 5u);
	model.notify(0);
	REQUIRE(wait_for([&] { return workers[0]->stats().malformed.load() == 1; }));
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	CHECK(resets.load() == 0); // queue 1 still has its READ in flight

	store.release(0);
	REQUIRE(wait_for([&] {
		model.handle_doorbells(10);
		return resets.load() == 1;
	}));
	// The READ was answered, with its data, before the reset.
	REQUIRE(model.ring(1).completions().size() == 1);
	CHECK(model.ring(1).completions()[0].scsi_status == 0);
	CHECK(model.ring(1).completions()[0].data_in == std::vector<uint8_t>(block, 0x77));
	CHECK(workers[1]->stats().stale_results.load() == 0);

	// Both queues serve again.
	store.hold(false);
	auto r0 = model.submit(0, cdb10(0x28, 7, 1), {}, block);
	auto r1 = model.submit(1, cdb10(0x28, 7, 1), {}, block);
	REQUIRE(r0);
	REQUIRE(r1);
	model.notify_all();
	REQUIRE(wait_for([&] {
		model.handle_doorbells(10);
		return model.ring(0).completions().size() == 1 &&
		       model.ring(1).completions().size() == 2;
	}));
	CHECK(model.ring(0).completions()[0].data_in == std::vector<uint8_t>(block, 0x77));
	CHECK_FALSE(model.any_broken());
	workers.clear();
}
