// SPDX-License-Identifier: GPL-2.0-or-later
// Issue 14 F2 and F3 on the queue worker over the kernel ring model:
// - the kernel resets the ring (action/reset_ring) while a command's I/O is
//   held in the worker's io_uring; the next command gets the same cmd_id at
//   the same ring position, and must be served and answered with its own
//   result, while the old command's late result is dropped;
// - a ring the worker finds broken is reset through the device's hook and
//   served again; reset by the kernel on its own while broken, with the tail
//   at 0 (where the reset leaves it) and a command in flight, it is served
//   again too, the late result dropped;
// - a stop whose drain gives up leaves the buffers of I/O still in flight
//   allocated (a late write must still send the command's data).
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/queue_worker.h"
#include "held_backstore.h"
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

} // namespace

TEST_CASE("F2: after a kernel-side ring reset, a new command reusing a held command's "
	  "cmd_id is served and the old result is dropped", "[ring-reset]")
{
	set_log_level(log_level::error);
	held_backstore store(blocks * block);
	std::fill_n(store.bytes().begin() + 5 * block, block, 0x55);
	std::fill_n(store.bytes().begin() + 9 * block, block, 0x99);
	single_queue_rig h(block, blocks, "held/reset:",
			   [&](queue_params &qp) { qp.store = &store; });

	store.hold(true);
	auto old_id = h.model.queue_command(cdb10(0x28, 5, 1), {}, block);
	REQUIRE(old_id);
	h.interrupt();
	REQUIRE(wait_for([&] { return store.held() == 1; }));

	// action/reset_ring: the kernel fails the command itself and starts
	// the ring over; its next command gets the same id and position, and
	// is held in its turn.
	h.model.reset_ring();
	auto new_id = h.model.queue_command(cdb10(0x28, 9, 1), {}, block);
	REQUIRE(new_id == old_id);
	h.interrupt();
	REQUIRE(wait_for([&] { return store.held() == 2; }));

	// The old READ ends now, failing: that result must not reach the
	// ring, where it would answer the new command.
	store.release(0, -EIO);
	REQUIRE(wait_for([&] { return h.worker->stats().stale_results.load() == 1; }));
	CHECK(h.model.handle_completions() == 0);

	store.release(1);
	h.collect(1);
	const auto &first = h.model.completions()[0];
	CHECK(first.cmd_id == *new_id);
	CHECK(first.scsi_status == 0);
	CHECK(first.data_in == std::vector<uint8_t>(block, 0x99));
	CHECK_FALSE(h.model.broken());
	CHECK(h.worker->stats().ring_resets.load() == 1);

	store.hold(false);
	// And serving goes on.
	REQUIRE(h.model.queue_command(cdb10(0x28, 9, 1), {}, block));
	h.interrupt();
	h.collect(2);
	CHECK(h.model.completions()[1].data_in == std::vector<uint8_t>(block, 0x99));
}

TEST_CASE("F2: a ring reset seen only when the old command is answered drops its result",
	  "[ring-reset]")
{
	// As above, but the worker hears of nothing between the reset and the
	// old command's end (no doorbell): the check before an answer is
	// written must see that the entry is the kernel's new one.
	set_log_level(log_level::error);
	held_backstore store(blocks * block);
	std::fill_n(store.bytes().begin() + 5 * block, block, 0x55);
	single_queue_rig h(block, blocks, "held/reset-late:",
			   [&](queue_params &qp) { qp.store = &store; });

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
	CHECK(h.model.handle_completions() == 0);
	CHECK(h.worker->stats().ring_resets.load() == 1);

	// The new command is the kernel's and is served as usual.
	h.interrupt();
	REQUIRE(wait_for([&] { return store.held() == 1; }));
	store.release(1);
	h.collect(1);
	CHECK(h.model.completions()[0].cmd_id == *new_id);
	CHECK(h.model.completions()[0].scsi_status == 0);
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
	CHECK(our_resets.load() == 0); // the kernel's reset did it
	CHECK(h.worker->stats().ring_resets.load() == 1);

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
