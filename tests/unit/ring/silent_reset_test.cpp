// SPDX-License-Identifier: GPL-2.0-or-later
// An administrator's action/reset_ring on a served device that tcmud is not
// told about, after which the kernel queues new entries before tcmud looks
// again: with cmd_tail at 0 and the new entries reaching as far as tcmud had
// read, cmd_tail and cmd_head look as before. sync_with_kernel() must still
// see the reset, or publish() moves cmd_tail over entries tcmud never read
// and the kernel completes those commands unserved (GOOD for a READ that
// returned nothing, a WRITE that never reached the medium).
#include <catch2/catch.hpp>

#include <cerrno>

#include "ring/tcmu_abi.h"
#include "ring_test_support.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

// After the reset is seen: the new command is the next one taken, and
// answering it is all the kernel collects.
void new_command_served(command_ring &ring, kernel_ring_model &model, uint16_t id)
{
	ring_command c = next_command(ring);
	CHECK(c.cmd_id == id);
	REQUIRE(ring.complete(c.cmd_id, 0x02, pattern(18, 7)) == 0);
	ring.publish();
	CHECK(model.handle_completions() == 1);
	CHECK_FALSE(model.broken());
	REQUIRE_FALSE(model.completions().empty());
	CHECK(model.completions().back().cmd_id == id);
	CHECK(model.completions().back().scsi_status == 0x02);
}

} // namespace

TEST_CASE("a silent reset refilled over a TMR tcmud read but had not published past is seen")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	std::vector<uint16_t> none;
	REQUIRE(model.queue_tmr(5, none));
	auto ev = ring.next();
	REQUIRE(ev);
	REQUIRE(std::holds_alternative<ring_tmr>(*ev));
	model.reset_ring();
	// A WRITE's entry, with its iovec, is at least as long as the TMR's.
	auto id = model.queue_command(write10_cdb, pattern(4096, 3));
	REQUIRE(id);
	CHECK(ring.sync_with_kernel());
	new_command_served(ring, model, *id);
}

TEST_CASE("a silent reset refilled over an answered command not yet published is seen")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	auto a = model.queue_command(tur_cdb);
	REQUIRE(a);
	CHECK(next_command(ring).cmd_id == *a);
	REQUIRE(ring.complete_good(*a, 0) == 0); // answered, cmd_tail not moved yet
	model.reset_ring();
	// The same length and, the kernel's ids being free again, the same id:
	// only the mark in the entry tells it from the one tcmud answered.
	auto b = model.queue_command(tur_cdb);
	REQUIRE(b);
	CHECK(ring.sync_with_kernel());
	new_command_served(ring, model, *b);
}

TEST_CASE("a silent reset refilled over a command in flight is seen, and its answer dropped")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	auto a = model.queue_command(read10_cdb, {}, 4096);
	REQUIRE(a);
	CHECK(next_command(ring).cmd_id == *a);
	model.reset_ring();
	auto b = model.queue_command(read10_cdb, {}, 4096);
	REQUIRE(b);
	const uint32_t generation = ring.generation();
	CHECK(ring.sync_with_kernel());
	CHECK(ring.generation() != generation);
	new_command_served(ring, model, *b);
}
