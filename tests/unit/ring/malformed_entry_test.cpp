// SPDX-License-Identifier: GPL-2.0-or-later
// Entries the kernel should never write. Each is rejected with its reason;
// a bad command is failed and the ring goes on; bad framing stops the ring
// until the kernel's reset_ring, after which it works again.
#include <catch2/catch.hpp>

#include "ring/tcmu_abi.h"
#include "ring_test_support.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

// Ring with one queued command whose entry the test then damages.
struct one_entry {
	kernel_ring_model model;
	command_ring ring = attach_ring(model);
	uint16_t id = *model.queue_command(write10_cdb, pattern(4096, 1));
	uint64_t at = model.cmdr_off() + uint64_t(model.last_entry_pos());
};

// A command that cannot be served is failed with CHECK CONDITION, the kernel
// finds the response under its cmd_id, and the next command works.
void fail_and_go_on(one_entry &t, const ring_malformed &m)
{
	CHECK(m.cmd_id == t.id);
	CHECK(m.needs_response);
	CHECK_FALSE(m.ring_broken);
	REQUIRE(t.ring.complete(m.cmd_id, 0x02, {}) == 0);
	t.ring.publish();
	CHECK(t.model.handle_completions() == 1);
	CHECK(t.model.completions().at(0).scsi_status == 0x02);
	CHECK_FALSE(t.model.broken());

	auto next_id = t.model.queue_command(tur_cdb);
	CHECK(next_command(t.ring).cmd_id == *next_id);
}

void expect_broken(command_ring &ring, malformed_reason why)
{
	auto m = next_malformed(ring);
	CHECK(m.reason == why);
	CHECK(m.ring_broken);
	CHECK_FALSE(m.needs_response);
	CHECK(ring.broken());
	CHECK_FALSE(ring.next());
}

} // namespace

TEST_CASE("a length that is not a multiple of 8 breaks the ring as a bad opcode")
{
	one_entry t;
	t.model.poke_u32(t.at, 0x7c | TCMUD_OP_CMD);
	expect_broken(t.ring, malformed_reason::bad_opcode);
}

TEST_CASE("an opcode other than PAD, CMD and TMR breaks the ring")
{
	one_entry t;
	t.model.poke_u32(t.at, 128 | 5);
	expect_broken(t.ring, malformed_reason::bad_opcode);
}

TEST_CASE("an entry of length zero breaks the ring instead of looping")
{
	one_entry t;
	t.model.poke_u32(t.at, TCMUD_OP_CMD);
	expect_broken(t.ring, malformed_reason::zero_length);
}

TEST_CASE("a PAD of length zero breaks the ring instead of looping")
{
	one_entry t;
	t.model.poke_u32(t.at, TCMUD_OP_PAD);
	expect_broken(t.ring, malformed_reason::zero_length);
}

TEST_CASE("an entry crossing the ring end breaks the ring")
{
	one_entry t;
	t.model.poke_u32(t.at, (t.model.cmdr_size() + 8) | TCMUD_OP_CMD);
	expect_broken(t.ring, malformed_reason::crosses_ring_end);
}

TEST_CASE("an entry longer than what cmd_head published breaks the ring")
{
	one_entry t;
	t.model.poke_u32(t.at, (t.model.cmd_head() + 64) | TCMUD_OP_CMD);
	expect_broken(t.ring, malformed_reason::beyond_head);
}

TEST_CASE("a CMD entry too short to hold a response breaks the ring")
{
	one_entry t;
	t.model.poke_u32(t.at, 64 | TCMUD_OP_CMD);
	expect_broken(t.ring, malformed_reason::short_entry);
}

TEST_CASE("a cmd_head outside the ring breaks it")
{
	one_entry t;
	t.model.set_cmd_head(t.model.cmdr_size() + 8);
	expect_broken(t.ring, malformed_reason::head_invalid);
}

TEST_CASE("a cmd_head that is not 8-aligned breaks the ring")
{
	one_entry t;
	t.model.set_cmd_head(t.model.cmd_head() + 4);
	expect_broken(t.ring, malformed_reason::head_invalid);
}

TEST_CASE("a cmd_id already in flight breaks the ring")
{
	one_entry t;
	t.model.queue_command(tur_cdb);
	uint64_t second = t.model.cmdr_off() + uint64_t(t.model.last_entry_pos());
	t.model.poke_u32(second + TCMUD_HDR_CMD_ID_OFF, t.id); // kflags, uflags stay 0
	next_command(t.ring);
	expect_broken(t.ring, malformed_reason::duplicate_cmd_id);
}

TEST_CASE("a huge iov_cnt fails that command and the ring goes on")
{
	one_entry t;
	t.model.poke_u32(t.at + TCMUD_REQ_IOV_CNT_OFF, 0xffffffff);
	auto m = next_malformed(t.ring);
	CHECK(m.reason == malformed_reason::iov_count);
	fail_and_go_on(t, m);
}

TEST_CASE("an iovec array longer than the entry fails that command")
{
	one_entry t;
	t.model.poke_u32(t.at + TCMUD_REQ_IOV_BIDI_CNT_OFF, 5);
	auto m = next_malformed(t.ring);
	CHECK(m.reason == malformed_reason::iov_count);
	fail_and_go_on(t, m);
}

TEST_CASE("more iovecs than max_iovs_per_command fail that command")
{
	kernel_ring_model model;
	ring_options opts;
	opts.max_iovs_per_command = 0;
	auto ring = attach_ring(model, opts);
	model.queue_command(write10_cdb, pattern(512, 1));
	CHECK(next_malformed(ring).reason == malformed_reason::iov_count);
}

TEST_CASE("an iovec pointing into the command ring fails that command")
{
	one_entry t;
	t.model.poke_u64(t.at + TCMUD_REQ_IOV_OFF, t.model.cmdr_off());
	auto m = next_malformed(t.ring);
	CHECK(m.reason == malformed_reason::iov_outside_data_area);
	fail_and_go_on(t, m);
}

TEST_CASE("an iovec running past the end of the mapping fails that command")
{
	one_entry t;
	t.model.poke_u64(t.at + TCMUD_REQ_IOV_OFF, t.model.mapping().size() - 100);
	auto m = next_malformed(t.ring);
	CHECK(m.reason == malformed_reason::iov_outside_data_area);
	fail_and_go_on(t, m);
}

TEST_CASE("an iovec whose offset + length wraps fails that command")
{
	one_entry t;
	t.model.poke_u64(t.at + TCMUD_REQ_IOV_OFF + 8, ~uint64_t(0) - 16);
	auto m = next_malformed(t.ring);
	CHECK(m.reason == malformed_reason::iov_overflow);
	fail_and_go_on(t, m);
}

TEST_CASE("a cdb_off outside the mapping fails that command")
{
	one_entry t;
	t.model.poke_u64(t.at + TCMUD_REQ_CDB_OFF_OFF, uint64_t(1) << 63);
	auto m = next_malformed(t.ring);
	CHECK(m.reason == malformed_reason::cdb_outside_mapping);
	fail_and_go_on(t, m);
}

TEST_CASE("a CDB that would run past the end of the mapping fails that command")
{
	one_entry t;
	auto map = t.model.mapping();
	map[map.size() - 3] = std::byte{0x28}; // READ(10) needs 10 bytes, 3 remain
	t.model.poke_u64(t.at + TCMUD_REQ_CDB_OFF_OFF, map.size() - 3);
	auto m = next_malformed(t.ring);
	CHECK(m.reason == malformed_reason::cdb_outside_mapping);
	fail_and_go_on(t, m);
}

TEST_CASE("a variable-length CDB longer than 260 bytes fails that command")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	std::vector<uint8_t> cdb(8, 0);
	cdb[0] = 0x7f;
	cdb[7] = 0xff;
	model.queue_command(cdb);
	CHECK(next_malformed(ring).reason == malformed_reason::cdb_length);
}

TEST_CASE("a 32-byte variable-length CDB is copied whole")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	auto cdb = pattern(32, 5);
	cdb[0] = 0x7f;
	cdb[7] = 0x18;
	model.queue_command(cdb);
	auto cmd = next_command(ring);
	CHECK(std::vector<uint8_t>(cmd.cdb.begin(), cmd.cdb.end()) == cdb);
}

TEST_CASE("a TMR whose id count does not fit is reported and skipped")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	std::vector<uint16_t> ids = {1};
	model.queue_tmr(1, ids);
	uint64_t at = model.cmdr_off() + uint64_t(model.last_entry_pos());
	model.poke_u32(at + TCMUD_TMR_CMD_CNT_OFF, 1000);
	auto id = model.queue_command(tur_cdb);

	auto m = next_malformed(ring);
	CHECK(m.reason == malformed_reason::tmr_count);
	CHECK_FALSE(m.needs_response);
	CHECK_FALSE(m.ring_broken);
	CHECK(next_command(ring).cmd_id == *id);
}

TEST_CASE("after the kernel resets a broken ring, commands flow again")
{
	one_entry t;
	t.model.poke_u32(t.at, TCMUD_OP_CMD);
	expect_broken(t.ring, malformed_reason::zero_length);

	t.model.reset_ring();
	REQUIRE(t.ring.reset() == 0);
	CHECK_FALSE(t.ring.broken());
	CHECK(t.ring.in_flight() == 0);
	auto id = t.model.queue_command(tur_cdb);
	auto cmd = next_command(t.ring);
	CHECK(cmd.cmd_id == *id);
	t.ring.complete(cmd.cmd_id, 0, {});
	t.ring.publish();
	CHECK(t.model.handle_completions() == 1);
	CHECK_FALSE(t.model.broken());
}
