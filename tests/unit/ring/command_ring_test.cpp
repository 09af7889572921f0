// SPDX-License-Identifier: GPL-2.0-or-later
// The ring engine against the kernel model: round trips, wrap-around through a
// PAD, out-of-order completion, TMR entries, a full ring, back-pressure.
#include <catch2/catch.hpp>

#include <cerrno>
#include <set>

#include "ring/tcmu_abi.h"
#include "ring_test_support.h"

using namespace tcmud;
using namespace tcmud::test;

TEST_CASE("a WRITE's CDB and Data-Out reach the daemon and GOOD reaches the kernel")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	auto data = pattern(8192, 3);
	auto id = model.queue_command(write10_cdb, data);
	REQUIRE(id);

	auto cmd = next_command(ring);
	CHECK(cmd.cmd_id == *id);
	CHECK(std::vector<uint8_t>(cmd.cdb.begin(), cmd.cdb.end()) == write10_cdb);
	CHECK(read_iovs(cmd.data_iovs()) == data);
	CHECK_FALSE(ring.next());
	CHECK(ring.in_flight() == 1);

	REQUIRE(ring.complete(cmd.cmd_id, 0, {}) == 0);
	CHECK(ring.publish());
	CHECK(model.handle_completions() == 1);
	CHECK_FALSE(model.broken());
	CHECK(model.completions().at(0).cmd_id == *id);
	CHECK(model.completions().at(0).scsi_status == 0);
	CHECK(ring.in_flight() == 0);
}

TEST_CASE("Data-In written into the iovecs reaches the kernel, cut to read_len")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	auto id = model.queue_command(read10_cdb, {}, 4096);
	auto cmd = next_command(ring);
	auto data = pattern(4096, 9);
	write_iovs(cmd.data_iovs(), data);

	ring.complete(cmd.cmd_id, 0, {}, 512);
	ring.publish();
	model.handle_completions();
	const auto &c = model.completions().at(0);
	CHECK(c.cmd_id == *id);
	CHECK((c.uflags & TCMUD_UFLAG_READ_LEN));
	CHECK(c.read_len == 512);
	CHECK(c.data_in == std::vector<uint8_t>(data.begin(), data.begin() + 512));
}

TEST_CASE("read_len is not flagged when the kernel does not offer CAP_READ_LEN")
{
	model_options o;
	o.flags = TCMUD_MB_FLAG_CAP_OOOC;
	kernel_ring_model model(o);
	auto ring = attach_ring(model);
	model.queue_command(read10_cdb, {}, 4096);
	auto cmd = next_command(ring);

	ring.complete(cmd.cmd_id, 0, {}, 512);
	ring.publish();
	model.handle_completions();
	CHECK_FALSE((model.completions().at(0).uflags & TCMUD_UFLAG_READ_LEN));
	CHECK(model.completions().at(0).data_in.size() == 4096);
}

TEST_CASE("complete_good answers GOOD with read_len, out of order, as complete() does")
{
	bool cap_read_len = GENERATE(true, false);
	model_options o;
	if (!cap_read_len)
		o.flags = TCMUD_MB_FLAG_CAP_OOOC;
	kernel_ring_model model(o);
	auto ring = attach_ring(model);
	auto first = model.queue_command(read10_cdb, {}, 4096);
	auto second = model.queue_command(read10_cdb, {}, 4096);
	auto a = next_command(ring);
	auto b = next_command(ring);
	// The second answer goes into the first entry: its request fields
	// (iov_cnt and more) lie under the response and must all be replaced.
	REQUIRE(ring.complete_good(b.cmd_id, 1024) == 0);
	REQUIRE(ring.complete_good(a.cmd_id, 4096) == 0);
	CHECK(ring.complete_good(a.cmd_id, 4096) == -ENOENT);
	CHECK(ring.in_flight() == 0);
	CHECK(ring.publish());
	REQUIRE(model.handle_completions() == 2);
	CHECK_FALSE(model.broken());
	for (const auto &c : model.completions()) {
		CHECK(c.scsi_status == 0);
		CHECK(bool(c.uflags & TCMUD_UFLAG_READ_LEN) == cap_read_len);
		if (c.cmd_id == *second)
			CHECK(c.data_in.size() == (cap_read_len ? 1024u : 4096u));
		else
			CHECK(c.cmd_id == *first);
		if (cap_read_len)
			CHECK(c.read_len == (c.cmd_id == *second ? 1024u : 4096u));
	}
}

TEST_CASE("sense bytes land in rsp.sense_buffer and the rest of it is zeroed")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	model.queue_command(tur_cdb);
	auto cmd = next_command(ring);
	std::vector<uint8_t> sense = {0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x20, 0};

	ring.complete(cmd.cmd_id, 0x02, sense);
	ring.publish();
	model.handle_completions();
	const auto &c = model.completions().at(0);
	CHECK(c.scsi_status == 0x02);
	std::vector<uint8_t> expect(96, 0);
	std::copy(sense.begin(), sense.end(), expect.begin());
	CHECK(c.sense == expect);
}

TEST_CASE("an unknown opcode is answered with TCMU_UFLAG_UNKNOWN_OP")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	model.queue_command(std::vector<uint8_t>{0xc5, 0, 0, 0, 0, 0, 0, 0, 0, 0});
	auto cmd = next_command(ring);

	REQUIRE(ring.complete_unknown_op(cmd.cmd_id) == 0);
	ring.publish();
	model.handle_completions();
	CHECK((model.completions().at(0).uflags & TCMUD_UFLAG_UNKNOWN_OP));
	CHECK_FALSE(model.broken());
}

TEST_CASE("a bidirectional command's iovecs split into Data-Out and Data-In")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	auto out = pattern(4096, 1);
	model.queue_command(write10_cdb, out, 8192);
	auto cmd = next_command(ring);

	CHECK(cmd.iov_bidi_cnt >= 1);
	CHECK(read_iovs(cmd.data_iovs()) == out);
	CHECK(iov_bytes(cmd.bidi_iovs()) == 8192);
}

TEST_CASE("entries wrap around the ring end through a PAD, round after round")
{
	model_options o;
	o.cmdr_size = 1024;
	kernel_ring_model model(o);
	auto ring = attach_ring(model);
	int wraps = 0;
	for (int i = 0; i < 60; i++) {
		uint32_t before = model.cmd_head();
		auto data = pattern(size_t(512 * (1 + i % 5)), uint8_t(i));
		auto id = model.queue_command(write10_cdb, data);
		REQUIRE(id);
		wraps += model.cmd_head() < before;

		auto cmd = next_command(ring);
		REQUIRE(cmd.cmd_id == *id);
		REQUIRE(read_iovs(cmd.data_iovs()) == data);
		ring.complete(cmd.cmd_id, 0, {});
		ring.publish();
		REQUIRE(model.handle_completions() == 1);
		REQUIRE_FALSE(model.broken());
	}
	CHECK(wraps >= 3);
}

TEST_CASE("responses given in reverse order all reach the kernel (CAP_OOOC)")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	std::vector<uint16_t> ids;
	for (int i = 0; i < 3; i++)
		ids.push_back(*model.queue_command(tur_cdb));
	for (int i = 0; i < 3; i++)
		next_command(ring);

	for (int i = 2; i >= 0; i--)
		REQUIRE(ring.complete(ids[size_t(i)], 0, {}) == 0);
	ring.publish();
	CHECK(model.handle_completions() == 3);
	CHECK_FALSE(model.broken());
	// The oldest slot carries the first response given: the third command's.
	CHECK(model.completions().at(0).cmd_id == ids[2]);
	CHECK(model.in_flight() == 0);
}

TEST_CASE("a command in flight keeps its CDB and iovecs while its slot is reused")
{
	model_options o;
	o.cmdr_size = 1024;
	kernel_ring_model model(o);
	auto ring = attach_ring(model);
	std::vector<uint8_t> cdb = {0x2a, 0, 0, 0, 0x12, 0x34, 0, 0, 1, 0};
	auto data = pattern(4096, 77);
	auto slow_id = *model.queue_command(cdb, data);
	uint32_t slow_pos = model.last_entry_pos();
	auto slow = next_command(ring);

	// Other commands finish first: their responses go into the slow one's
	// slot and later ones, and the kernel refills the ring until it has
	// written over the slow command's entry.
	bool reused = false;
	for (int i = 0; i < 40 && !reused; i++) {
		model.queue_command(read10_cdb, {}, 512);
		reused = model.last_entry_pos() == slow_pos;
		auto fast = next_command(ring);
		ring.complete(fast.cmd_id, 0, {});
		ring.publish();
		model.handle_completions();
	}
	REQUIRE(reused);
	CHECK(std::vector<uint8_t>(slow.cdb.begin(), slow.cdb.end()) == cdb);
	CHECK(read_iovs(slow.data_iovs()) == data);

	ring.complete(slow_id, 0, {});
	ring.publish();
	model.handle_completions();
	CHECK_FALSE(model.broken());
	CHECK(model.in_flight() == 0);
}

TEST_CASE("a TMR entry is reported and the kernel's completion walk skips it")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	auto a = *model.queue_command(tur_cdb);
	std::vector<uint16_t> aborted = {a};
	REQUIRE(model.queue_tmr(1, aborted));
	auto b = *model.queue_command(tur_cdb);

	CHECK(next_command(ring).cmd_id == a);
	auto ev = ring.next();
	REQUIRE(ev);
	REQUIRE(std::holds_alternative<ring_tmr>(*ev));
	auto tmr = std::get<ring_tmr>(*ev);
	CHECK(tmr.tmr_type == 1);
	CHECK(std::vector<uint16_t>(tmr.cmd_ids.begin(), tmr.cmd_ids.end()) == aborted);
	CHECK(next_command(ring).cmd_id == b);

	ring.complete(b, 0, {});
	ring.complete(a, 0, {});
	ring.publish();
	CHECK(model.handle_completions() == 2);
	CHECK_FALSE(model.broken());
}

TEST_CASE("cmd_tail moves past a TMR when no command is in flight")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	std::vector<uint16_t> none;
	model.queue_tmr(5, none);
	auto ev = ring.next();
	REQUIRE(ev);
	CHECK(std::holds_alternative<ring_tmr>(*ev));

	CHECK(ring.publish());
	model.handle_completions();
	CHECK_FALSE(model.broken());
	CHECK(model.queue_command(tur_cdb)); // the space came back
}

TEST_CASE("a full ring refuses commands until responses free room")
{
	model_options o;
	o.cmdr_size = 1024;
	kernel_ring_model model(o);
	auto ring = attach_ring(model);
	int queued = 0;
	while (model.queue_command(tur_cdb))
		queued++;
	REQUIRE(queued >= 4);

	std::vector<uint16_t> ids;
	while (auto ev = ring.next())
		ids.push_back(std::get<ring_command>(*ev).cmd_id);
	CHECK(int(ids.size()) == queued);
	CHECK_FALSE(model.queue_command(tur_cdb)); // nothing published yet

	for (auto id : ids)
		ring.complete(id, 0, {});
	ring.publish();
	CHECK(model.handle_completions() == size_t(queued));
	CHECK(model.queue_command(tur_cdb));
}

TEST_CASE("at max_in_flight the ring leaves entries queued until one completes")
{
	kernel_ring_model model;
	ring_options opts;
	opts.max_in_flight = 2;
	auto ring = attach_ring(model, opts);
	for (int i = 0; i < 3; i++)
		model.queue_command(tur_cdb);

	auto first = next_command(ring);
	next_command(ring);
	CHECK_FALSE(ring.next());
	ring.complete(first.cmd_id, 0, {});
	CHECK(next_command(ring).cmd_id == 3);
}

TEST_CASE("completing a cmd_id that is not in flight is refused and publishes nothing")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	CHECK(ring.complete(42, 0, {}) == -ENOENT);
	CHECK(ring.complete_unknown_op(42) == -ENOENT);
	CHECK_FALSE(ring.publish());
}

TEST_CASE("publish without new responses leaves cmd_tail where it was")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	model.queue_command(tur_cdb);
	auto cmd = next_command(ring);
	CHECK_FALSE(ring.publish()); // the command is still in flight
	ring.complete(cmd.cmd_id, 0, {});
	CHECK(ring.publish());
	CHECK_FALSE(ring.publish());
}
