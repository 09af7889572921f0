// SPDX-License-Identifier: GPL-2.0-or-later
// N queue workers, each on its own thread with its own io_uring, serving N
// rings of the in-process multi-queue kernel model (kernel_mq_model.h) over
// one real file backstore and one logical unit, as tcmu_device sets them up
// on the patched kernel: commands spread over the queues by submitting CPU,
// each queue woken through and completed on its own "uio device".
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "handler_registry.h"
#include "core/queue_worker.h"
#include "kernel_mq_model.h"
#include "worker_rig.h"
#include "log/log.h"

using namespace tcmud;
using tcmud::test::kernel_mq_model;
using tcmud::test::model_completion;

namespace {

constexpr uint32_t block = 512;
constexpr uint64_t blocks = 4096;

struct mq_harness {
	kernel_mq_model model;
	tcmud::test::scratch_unit unit{block, blocks};
	std::vector<std::unique_ptr<queue_worker>> workers;
	// Per queue: how many commands were queued (the kernel's view).
	std::vector<size_t> queued;

	explicit mq_harness(unsigned n) : model(n), queued(n, 0)
	{
		for (unsigned q = 0; q < n; ++q) {
			queue_params qp;
			qp.map = model.ring(q).mapping();
			qp.uio = uio_channel(model.uio_fd(q));
			qp.queue_index = q;
			qp.log_prefix = "file/mq" + std::to_string(q) + ":";
			qp.lu = unit.lu.get();
			qp.store = unit.store.get();
			qp.ring.max_in_flight = 32;
			workers.push_back(std::make_unique<queue_worker>(qp));
			REQUIRE(workers.back()->start());
		}
	}

	~mq_harness()
	{
		workers.clear();
	}

	// Queues a command from `cpu`; the caller wakes the queues.
	kernel_mq_model::queued submit(unsigned cpu, const std::vector<uint8_t> &cdb,
				       const std::vector<uint8_t> &out = {}, size_t in_len = 0)
	{
		auto at = model.submit(cpu, cdb, out, in_len);
		REQUIRE(at);
		queued[at->queue]++;
		return *at;
	}

	// Until every queued command has a completion; the model calls the ring
	// broken on a response for an id not in flight (a double completion).
	void collect()
	{
		size_t want = 0;
		for (size_t n : queued)
			want += n;
		auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
		while (model.completions() < want) {
			REQUIRE(std::chrono::steady_clock::now() < deadline);
			REQUIRE(model.handle_doorbells(100));
			REQUIRE_FALSE(model.any_broken());
		}
		for (unsigned q = 0; q < model.nr_queues(); ++q) {
			CHECK(model.ring(q).completions().size() == queued[q]);
			CHECK(model.ring(q).in_flight() == 0);
		}
	}

	const model_completion &completion(kernel_mq_model::queued at)
	{
		// The latest completion of that id on that queue (ids are reused).
		const auto &done = model.ring(at.queue).completions();
		for (size_t i = done.size(); i-- > 0;)
			if (done[i].cmd_id == at.cmd_id)
				return done[i];
		FAIL("no completion for queue " << at.queue << " cmd_id " << at.cmd_id);
		return done.front();
	}
};

std::vector<uint8_t> cdb10(uint8_t op, uint32_t lba, uint16_t count)
{
	return {op, 0, uint8_t(lba >> 24), uint8_t(lba >> 16), uint8_t(lba >> 8), uint8_t(lba),
		0, uint8_t(count >> 8), uint8_t(count), 0};
}

std::vector<uint8_t> compare_and_write(uint64_t lba, uint8_t nblocks)
{
	std::vector<uint8_t> c(16, 0);
	c[0] = 0x89;
	for (int i = 0; i < 8; ++i)
		c[2 + i] = uint8_t(lba >> (56 - 8 * i));
	c[13] = nblocks;
	return c;
}

std::vector<uint8_t> pattern(uint32_t seed, size_t len)
{
	std::vector<uint8_t> d(len);
	for (size_t i = 0; i < len; ++i)
		d[i] = uint8_t(seed * 131 + i * 7 + (i >> 8));
	return d;
}

bool good(const model_completion &c) { return c.scsi_status == 0; }
bool miscompare(const model_completion &c)
{
	return c.scsi_status == 0x02 && (c.sense[2] & 0x0f) == 0x0e;
}

} // namespace

TEST_CASE("multi-queue: commands from every CPU complete exactly once on their own queue, "
	  "per-queue stats match")
{
	set_log_level(log_level::warn);
	for (unsigned n : {1u, 2u, 4u}) {
		INFO(n << " queues");
		mq_harness h(n);
		constexpr unsigned cpus = 8, per_cpu = 3;
		// Writes from 8 CPUs: CPU c's commands go to queue c % n.
		std::map<uint32_t, std::vector<uint8_t>> written;
		for (unsigned round = 0; round < per_cpu; ++round) {
			for (unsigned cpu = 0; cpu < cpus; ++cpu) {
				uint32_t lba = (cpu * per_cpu + round) * 8;
				written[lba] = pattern(lba, 8 * block);
				auto at = h.submit(cpu, cdb10(0x2a, lba, 8), written[lba]);
				CHECK(at.queue == cpu % n);
			}
			h.model.notify_all();
			h.collect();
		}
		// Read everything back from other CPUs than wrote it, 8 at a
		// time (ids are reused once answered, so check each batch).
		std::vector<std::pair<kernel_mq_model::queued, uint32_t>> reads;
		auto check_reads = [&] {
			h.model.notify_all();
			h.collect();
			for (const auto &[at, lba] : reads) {
				const model_completion &c = h.completion(at);
				REQUIRE(good(c));
				REQUIRE(c.data_in == written[lba]);
			}
			reads.clear();
		};
		unsigned cpu = 3;
		for (const auto &[lba, data] : written) {
			reads.emplace_back(h.submit(cpu++ % cpus, cdb10(0x28, lba, 8), {}, 8 * block),
					   lba);
			if (reads.size() == 8)
				check_reads();
		}
		check_reads();
		for (unsigned q = 0; q < n; ++q) {
			INFO("queue " << q);
			const queue_stats &s = h.workers[q]->stats();
			CHECK(s.commands.load() == h.queued[q]);
			CHECK(s.errors.load() == 0);
			CHECK(s.malformed.load() == 0);
			// Each queue rang for itself: one doorbell per published batch.
			CHECK(s.doorbells.load() == h.model.doorbells(q));
			CHECK(h.queued[q] == 2 * per_cpu * cpus / n);
		}
	}
}

TEST_CASE("multi-queue: COMPARE AND WRITE of one LBA from two queues at once: exactly one "
	  "wins each round")
{
	set_log_level(log_level::error);
	mq_harness h(2);
	constexpr uint32_t lba = 1000;
	std::vector<uint8_t> current = pattern(0, block);
	h.submit(0, cdb10(0x2a, lba, 1), current);
	h.model.notify_all();
	h.collect();

	for (uint32_t round = 1; round <= 100; ++round) {
		INFO("round " << round);
		std::vector<uint8_t> mine[2];
		kernel_mq_model::queued at[2];
		for (unsigned cpu = 0; cpu < 2; ++cpu) {
			// Both compare against what is there now; each would write
			// its own new block.
			mine[cpu] = pattern(round * 2 + cpu, block);
			std::vector<uint8_t> out = current;
			out.insert(out.end(), mine[cpu].begin(), mine[cpu].end());
			at[cpu] = h.submit(cpu, compare_and_write(lba, 1), out);
		}
		REQUIRE(at[0].queue != at[1].queue);
		h.model.notify_all(); // both workers start together
		h.collect();
		const model_completion &a = h.completion(at[0]);
		const model_completion &b = h.completion(at[1]);
		// Without the range lock both would read the old block and both
		// succeed; with it the second compares against the first's write.
		REQUIRE(((good(a) && miscompare(b)) || (miscompare(a) && good(b))));
		current = good(a) ? mine[0] : mine[1];

		auto rd = h.submit(round, cdb10(0x28, lba, 1), {}, block);
		h.model.notify_all();
		h.collect();
		REQUIRE(h.completion(rd).data_in == current);
	}
}

TEST_CASE("multi-queue: a malformed entry on one queue fails that command only; the other "
	  "queues and its next command are served")
{
	set_log_level(log_level::error);
	mq_harness h(4);
	std::vector<kernel_mq_model::queued> ok;
	for (unsigned cpu = 0; cpu < 4; ++cpu)
		if (cpu != 1)
			ok.push_back(h.submit(cpu, cdb10(0x28, cpu * 8, 1), {}, block));
	auto bad = h.submit(1, cdb10(0x28, 8, 1), {}, block);
	// iov[0].iov_base of that entry points past its queue's mapping.
	auto &ring = h.model.ring(bad.queue);
	uint64_t entry = ring.cmdr_off() + ring.last_entry_pos();
	ring.poke_u64(entry + 44, ring.mapping().size() + 4096);
	auto next = h.submit(5, cdb10(0x28, 40, 1), {}, block); // queue 1 again
	REQUIRE(next.queue == bad.queue);
	h.model.notify_all();
	h.collect();

	const model_completion &b = h.completion(bad);
	REQUIRE(b.scsi_status == 0x02);
	REQUIRE((b.sense[2] & 0x0f) == 0x04); // HARDWARE ERROR
	REQUIRE(good(h.completion(next)));
	for (auto at : ok)
		REQUIRE(good(h.completion(at)));
	for (unsigned q = 0; q < 4; ++q)
		CHECK(h.workers[q]->stats().malformed.load() == (q == bad.queue ? 1u : 0u));
}

TEST_CASE("multi-queue: a TMR names only its own queue's commands; each is answered exactly "
	  "once")
{
	set_log_level(log_level::error);
	mq_harness h(2);
	// Six commands answered before the TMR: their ids are listed too, but
	// they are no longer in flight (the slots that served them remember
	// them).
	std::vector<uint16_t> listed;
	for (uint32_t i = 0; i < 6; ++i)
		listed.push_back(h.submit(1, cdb10(0x28, i, 1), {}, block).cmd_id);
	h.model.notify_all();
	h.collect();

	// Queue 1: two READs, then the kernel's TMR listing them, the answered
	// ones and an id never used. Queue 0: a READ with the same cmd_id as one
	// of queue 1's (ids are per queue), and the empty TMR the patched kernel
	// always puts on queue 0.
	auto r1 = h.submit(1, cdb10(0x28, 64, 8), {}, 8 * block);
	auto r2 = h.submit(3, cdb10(0x28, 128, 8), {}, 8 * block);
	auto r0 = h.submit(0, cdb10(0x28, 256, 8), {}, 8 * block);
	REQUIRE(r1.queue == 1);
	REQUIRE(r2.queue == 1);
	REQUIRE(r0.cmd_id == r1.cmd_id);
	// The kernel reuses the lowest free ids: r1 and r2 took 1 and 2.
	std::erase_if(listed, [&](uint16_t id) { return id == r1.cmd_id || id == r2.cmd_id; });
	REQUIRE(listed.size() == 4);
	listed.insert(listed.begin() + 1, r1.cmd_id);
	listed.push_back(r2.cmd_id);
	listed.push_back(999);
	REQUIRE(h.model.ring(1).queue_tmr(5 /* LUN_RESET */, listed));
	REQUIRE(h.model.ring(0).queue_tmr(5, {}));
	h.model.notify_all();
	h.collect();

	// The READs were on the backing file's io_uring when the TMR was read
	// (it follows them in the same ring batch): both were in flight, both
	// are answered (the kernel frees their data area only then), once.
	for (auto at : {r1, r2, r0})
		REQUIRE(good(h.completion(at)));
	CHECK(h.model.ring(1).completions().size() == 8);
	CHECK(h.workers[1]->stats().tmrs.load() == 1);
	CHECK(h.workers[1]->stats().aborted.load() == 2);
	CHECK(h.workers[0]->stats().tmrs.load() == 1);
	CHECK(h.workers[0]->stats().aborted.load() == 0);

	// The TMR entries were consumed: the rings go on.
	auto after = h.submit(1, cdb10(0x28, 0, 1), {}, block);
	h.model.notify_all();
	h.collect();
	REQUIRE(good(h.completion(after)));
}

TEST_CASE("multi-queue: an interrupt on one queue's uio device wakes that queue's worker only; "
	  "each queue's completions go to its own device")
{
	set_log_level(log_level::error);
	mq_harness h(2);
	// A worker scans its ring once when it starts (commands queued before
	// a restart must be served), and on a busy machine that scan can come
	// after the submits below. One round trip per queue first puts each
	// worker past it, waiting on its device.
	for (unsigned q = 0; q < 2; ++q)
		REQUIRE(h.submit(q, cdb10(0x28, 16, 1), {}, block).queue == q);
	h.model.notify_all();
	h.collect();
	const size_t done0 = h.model.ring(0).completions().size();
	const size_t done1 = h.model.ring(1).completions().size();
	const size_t bells0 = h.model.doorbells(0);
	const size_t bells1 = h.model.doorbells(1);

	auto a = h.submit(0, cdb10(0x28, 0, 1), {}, block);
	auto b = h.submit(1, cdb10(0x28, 8, 1), {}, block);
	REQUIRE(a.queue == 0);
	REQUIRE(b.queue == 1);
	h.model.notify(1);
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (h.model.ring(1).completions().size() == done1) {
		REQUIRE(std::chrono::steady_clock::now() < deadline);
		REQUIRE(h.model.handle_doorbells(100));
	}
	// Queue 0 was never woken: its command waits, and nothing was written
	// to its device.
	REQUIRE(h.model.handle_doorbells(300));
	CHECK(h.model.ring(0).completions().size() == done0);
	CHECK(h.model.ring(0).in_flight() == 1);
	CHECK(h.model.doorbells(0) == bells0);
	CHECK(h.model.doorbells(1) > bells1);
	h.model.notify(0);
	h.collect();
	CHECK(good(h.completion(a)));
	CHECK(good(h.completion(b)));
	CHECK(h.model.doorbells(0) > bells0);
}
