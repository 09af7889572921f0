// SPDX-License-Identifier: GPL-2.0-or-later
// No command allocates once its slot is warm: this program replaces the
// global operator new with one that counts, runs each command once to let
// the slot's bounce buffer and iovec lists grow, then again and requires
// that nothing was allocated. The multi-step emulations are coroutines
// (command_task.h) whose frames live in the slot; a frame that did not fit
// would fail the command (HARDWARE ERROR) rather than allocate, so GOOD
// here also says each frame fits command::TASK_FRAME_SIZE.
//
// Each command runs against a backstore that completes inside submit() and
// against one that completes later, so every co_await really suspends.
// EXTENDED COPY is left out: it allocates its parsed lists (rare, and
// bounded by its limits).
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>

#include "byte_order.h"
#include "counting_new.h"
#include "command.h"
#include "logical_unit.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::test::allocations;
using tcmud::test::counting;
using tcmud::block_io;
using tcmud::block_op;

namespace {

constexpr uint32_t BS = 512;
constexpr uint64_t BLOCKS = 2048;

// A RAM backstore that never allocates: synchronous, or deferred with one
// request outstanding (one command runs at a time here).
class flat_store final : public tcmud::backstore_queue {
public:
	bool deferred = false;
	bool overlapped = false;  // a second request while one was pending

	void submit(block_io &io) override
	{
		if (deferred) {
			// No Catch2 check here: it may allocate inside the window.
			overlapped = overlapped || pending_ != nullptr;
			pending_ = &io;
			return;
		}
		io.done->io_done(perform(io));
	}
	// Completes the outstanding request; false if there was none.
	bool complete_one()
	{
		block_io *io = std::exchange(pending_, nullptr);
		if (!io)
			return false;
		io->done->io_done(perform(*io));
		return true;
	}

private:
	int64_t perform(block_io &io)
	{
		uint8_t *at = bytes_.data() + io.offset;
		switch (io.op) {
		case block_op::read:
		case block_op::write:
			for (const iovec &v : io.iov) {
				if (io.op == block_op::read)
					std::memcpy(v.iov_base, at, v.iov_len);
				else
					std::memcpy(at, v.iov_base, v.iov_len);
				at += v.iov_len;
			}
			return static_cast<int64_t>(io.length);
		case block_op::discard:
		case block_op::write_zeroes:
			std::memset(at, 0, io.length);
			return 0;
		case block_op::compare_and_write: {
			auto *given = static_cast<uint8_t *>(io.iov[0].iov_base);
			if (std::memcmp(at, given, io.length) != 0)
				return -EILSEQ;
			std::memcpy(at, given + io.length, io.length);
			return 0;
		}
		default:
			return 0;
		}
	}

	std::vector<uint8_t> bytes_ = std::vector<uint8_t>(BLOCKS * BS);
	block_io *pending_ = nullptr;
};

struct counting_owner final : command_owner {
	int done = 0;
	void command_done(command &) override { done++; }
	int wakes = 0;  // none expected: one command at a time
	void command_wake(command &) override { wakes++; }
};

struct rig {
	explicit rig(bool offload_compare_and_write)
	{
		logical_unit_config cfg;
		cfg.block_size = BS;
		cfg.num_blocks = BLOCKS;
		cfg.caps.discard = cfg.caps.discard_zeroes = cfg.caps.write_zeroes = true;
		cfg.caps.compare_and_write = offload_compare_and_write;
		cfg.max_compare_and_write_blocks = 4;
		auto created = logical_unit::create(cfg);
		REQUIRE(created.ok());
		lu = std::move(*created);
	}

	// Runs the command to its end; returns the allocations it made.
	uint64_t run(std::span<const uint8_t> cdb, std::span<const iovec> data)
	{
		int before = owner.done;
		counting = true;
		allocations = 0;
		cmd.reset(cdb, data, &owner);
		lu->execute(cmd, store);
		while (store.complete_one())
			;
		counting = false;
		REQUIRE(owner.done == before + 1);
		REQUIRE(owner.wakes == 0);
		REQUIRE_FALSE(store.overlapped);
		return allocations.load();
	}

	std::unique_ptr<logical_unit> lu;
	flat_store store;
	counting_owner owner;
	command cmd;
};

struct case_cdb {
	const char *name;
	std::vector<uint8_t> cdb;
};

std::vector<case_cdb> commands()
{
	std::vector<uint8_t> atomic(16);
	atomic[0] = WRITE_ATOMIC_16;
	put_be64(atomic, 2, 64);
	put_be16(atomic, 12, 8);
	std::vector<uint8_t> unmap = cdb10(UNMAP, 0, 8 + 3 * 16);
	return {
		{"READ(10)", cdb10(READ_10, 0, 600)},
		{"WRITE(10)", cdb10(WRITE_10, 0, 600)},
		{"VERIFY(10) BYTCHK 01b, three chunks", cdb10(VERIFY_10, 0, 600, BYTCHK_DATA)},
		{"VERIFY(16) BYTCHK 11b", cdb16(VERIFY_16, 0, 600, BYTCHK_ONE_BLOCK)},
		{"WRITE AND VERIFY(10)", cdb10(WRITE_VERIFY_10, 0, 600, BYTCHK_DATA)},
		{"WRITE SAME(10), pattern", cdb10(WRITE_SAME_10, 1000, 600)},
		{"WRITE SAME(16) NDOB, zeroes", cdb16(WRITE_SAME_16, 1000, 600, 0x01)},
		{"UNMAP, three descriptors", unmap},
		{"COMPARE AND WRITE", compare_and_write_cdb(0, 4)},
		{"ORWRITE(16), three chunks", cdb16(ORWRITE_16, 0, 600)},
		{"WRITE ATOMIC(16)", atomic},
	};
}

// A data-out buffer that suits every command above: the first 600 blocks
// hold 0xff (so VERIFY of what WRITE and ORWRITE left compares equal, as
// does COMPARE AND WRITE's compare half), cut into 4 KiB iovecs; for
// UNMAP, its parameter list.
struct data_out {
	std::vector<uint8_t> bytes = std::vector<uint8_t>(600 * BS, 0xff);
	std::vector<iovec> iovs;
	std::vector<uint8_t> unmap_list = std::vector<uint8_t>(8 + 3 * 16);
	iovec unmap_iov{};
	data_out()
	{
		for (std::size_t at = 0; at < bytes.size(); at += 4096)
			iovs.push_back({bytes.data() + at, 4096});
		put_be16(unmap_list, 0, unmap_list.size() - 2);
		put_be16(unmap_list, 2, 3 * 16);
		for (uint64_t i = 0; i < 3; i++) {
			put_be64(unmap_list, 8 + i * 16, 1200 + i * 100);
			put_be32(unmap_list, 8 + i * 16 + 8, 50);
		}
		unmap_iov = {unmap_list.data(), unmap_list.size()};
	}
	std::span<const iovec> for_cdb(const std::vector<uint8_t> &cdb) const
	{
		if (cdb[0] == UNMAP)
			return {&unmap_iov, 1};
		return iovs;
	}
};

} // namespace

TEST_CASE("no command allocates once its slot is warm", "[allocation]")
{
	bool offload = GENERATE(false, true);
	bool deferred = GENERATE(false, true);
	rig r(offload);
	r.store.deferred = deferred;
	data_out data;
	// Medium = 0xff over the first 600 blocks, as the data-out buffer.
	r.run(cdb10(WRITE_10, 0, 600), data.iovs);
	for (const case_cdb &c : commands()) {
		CAPTURE(c.name, offload, deferred);
		r.run(c.cdb, data.for_cdb(c.cdb));
		REQUIRE(r.cmd.status() == SAM_STAT_GOOD);
		CHECK(r.run(c.cdb, data.for_cdb(c.cdb)) == 0);
		REQUIRE(r.cmd.status() == SAM_STAT_GOOD);
	}
}

TEST_CASE("the allocation counter sees an allocation", "[allocation]")
{
	// The check above can fail: a heap allocation inside the window counts.
	counting = true;
	allocations = 0;
	auto *p = new std::vector<int>(3);
	counting = false;
	delete p;
	CHECK(allocations.load() >= 1);
}
