// SPDX-License-Identifier: GPL-2.0-or-later
// COMPARE AND WRITE: match, miscompare, field checks, and atomicity against
// other writes, both stepped (deferred backstore) and raced (two threads);
// and the same atomicity for ORWRITE, the other read-modify-write.
#include <catch2/catch.hpp>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::backstore_queue;
using tcmud::block_io;
using tcmud::block_op;

namespace {

// Verify data (what the medium must hold) followed by write data.
std::vector<uint8_t> caw_data(const std::vector<uint8_t> &expect, const std::vector<uint8_t> &write)
{
	std::vector<uint8_t> d = expect;
	d.insert(d.end(), write.begin(), write.end());
	return d;
}

// One command in a slot of its own, for the stepped tests.
struct slot {
	std::vector<uint8_t> cdb;
	data_buffer buf;
	command cmd;
	slot(std::vector<uint8_t> c, std::vector<uint8_t> data) : cdb(std::move(c)), buf(std::move(data)) {}
	void start(lu_fixture &f, command_owner &owner)
	{
		cmd.reset(cdb, buf.iovs, &owner);
		f.lu->execute(cmd, f.store);
	}
};

} // namespace

TEST_CASE("COMPARE AND WRITE writes the second half when the first matches", "[caw]")
{
	lu_fixture f;
	auto old = pattern(2 * 512, 1), fresh = pattern(2 * 512, 2);
	std::copy(old.begin(), old.end(), f.block(40, 2).begin());
	require_good(f.run(compare_and_write_cdb(40, 2), caw_data(old, fresh), 0, 300));
	CHECK(std::equal(fresh.begin(), fresh.end(), f.block(40, 2).begin()));
}

TEST_CASE("COMPARE AND WRITE miscompare reports the offset and writes nothing", "[caw]")
{
	lu_fixture f;
	auto old = pattern(3 * 512, 1), fresh = pattern(3 * 512, 2);
	std::copy(old.begin(), old.end(), f.block(40, 3).begin());
	f.block(40, 3)[1000] ^= 0x01;
	auto r = f.run(compare_and_write_cdb(40, 3), caw_data(old, fresh));
	require_sense(r, MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	CHECK(r.sense.information == 1000u);
	CHECK(f.store.count(block_op::write) == 0);
	CHECK(f.lu->ranges().exclusive_users() == 0);
}

TEST_CASE("COMPARE AND WRITE miscompare in descriptor format carries the offset", "[caw]")
{
	lu_fixture f;
	f.lu->set_descriptor_sense(true);
	auto r = f.run(compare_and_write_cdb(0, 1), caw_data(std::vector<uint8_t>(512, 9),
							     std::vector<uint8_t>(512)));
	require_sense(r, MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	CHECK(r.sense.descriptor);
	CHECK(r.sense.information == 0u);
}

TEST_CASE("COMPARE AND WRITE above the maximum length is an invalid field", "[caw]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(compare_and_write_cdb(0, 5), std::vector<uint8_t>(10 * 512)), 13);
}

TEST_CASE("COMPARE AND WRITE of zero blocks is GOOD and does nothing", "[caw]")
{
	lu_fixture f;
	require_good(f.run(compare_and_write_cdb(0, 0)));
	CHECK(f.store.history().empty());
}

TEST_CASE("COMPARE AND WRITE past the end is LBA OUT OF RANGE", "[caw]")
{
	lu_fixture f;
	require_sense(f.run(compare_and_write_cdb(1023, 2), std::vector<uint8_t>(4 * 512)),
		      ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
}

TEST_CASE("COMPARE AND WRITE with less than 2N blocks of data is refused", "[caw]")
{
	lu_fixture f;
	require_sense(f.run(compare_and_write_cdb(0, 2), std::vector<uint8_t>(3 * 512)),
		      ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(f.store.history().empty());
}

TEST_CASE("COMPARE AND WRITE with FUA writes durably", "[caw]")
{
	lu_fixture f;
	require_good(f.run(compare_and_write_cdb(0, 1, 0x08), std::vector<uint8_t>(1024)));
	auto h = f.store.history();
	REQUIRE(h.size() == 2);
	CHECK(h[1].fua);
}

TEST_CASE("COMPARE AND WRITE with an unreadable block is a medium error", "[caw]")
{
	lu_fixture f;
	f.store.inject(block_op::read, -EIO);
	require_sense(f.run(compare_and_write_cdb(6, 1), std::vector<uint8_t>(1024)), MEDIUM_ERROR,
		      ASC_UNRECOVERED_READ_ERROR);
	CHECK(f.lu->ranges().exclusive_users() == 0);
}

TEST_CASE("a WRITE arriving between COMPARE AND WRITE's read and write waits for it", "[caw]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	f.fill_block(8, 0xaa);
	slot caw(compare_and_write_cdb(8, 1),
		 caw_data(std::vector<uint8_t>(512, 0xaa), std::vector<uint8_t>(512, 0xbb)));
	slot write(cdb10(WRITE_10, 8, 1), std::vector<uint8_t>(512, 0xcc));
	test_owner write_owner;
	write_owner.on_wake = [&](command &c) { f.lu->resume(c, f.store); };

	caw.start(f, f.owner);
	REQUIRE(f.store.queued() == 1);  // CAW's read
	write.start(f, write_owner);
	CHECK(f.store.queued() == 1);    // the WRITE is parked, not submitted
	f.store.complete(0);             // read done: compare matches, CAW writes
	REQUIRE(f.store.queued() == 1);
	CHECK(f.store.queued_at(0).op == block_op::write);
	CHECK(write_owner.wakes == 0);
	f.store.complete(0);             // CAW's write done: WRITE is let go
	CHECK(f.owner.done == 1);
	CHECK(caw.cmd.status() == SAM_STAT_GOOD);
	CHECK(write_owner.wakes == 1);
	REQUIRE(f.store.queued() == 1);
	f.store.complete(0);
	CHECK(write_owner.done == 1);
	CHECK(f.block(8)[0] == 0xcc);
}

TEST_CASE("a WRITE to other blocks is not held up by COMPARE AND WRITE", "[caw]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	slot caw(compare_and_write_cdb(8, 1), std::vector<uint8_t>(1024));
	slot write(cdb10(WRITE_10, 9, 1), std::vector<uint8_t>(512, 0xcc));
	caw.start(f, f.owner);
	write.start(f, f.owner);
	CHECK(f.store.queued() == 2);
	f.store.complete_all();
	f.store.complete_all();
	CHECK(f.owner.done == 2);
}

TEST_CASE("COMPARE AND WRITE waits for a WRITE already in flight before reading", "[caw]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	slot write(cdb10(WRITE_10, 8, 1), std::vector<uint8_t>(512, 0xcc));
	slot caw(compare_and_write_cdb(8, 1),
		 caw_data(std::vector<uint8_t>(512, 0xcc), std::vector<uint8_t>(512, 0xdd)));
	test_owner caw_owner;
	caw_owner.on_wake = [&](command &c) { f.lu->resume(c, f.store); };
	write.start(f, f.owner);
	caw.start(f, caw_owner);
	CHECK(f.store.queued() == 1);  // only the WRITE: CAW waits for it
	f.store.complete(0);
	CHECK(caw_owner.wakes == 1);
	f.store.complete_all();        // CAW's read sees the WRITE's data
	f.store.complete_all();
	CHECK(caw_owner.done == 1);
	CHECK(caw.cmd.status() == SAM_STAT_GOOD);
	CHECK(f.block(8)[0] == 0xdd);
}

TEST_CASE("two overlapping COMPARE AND WRITEs run one after the other", "[caw]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	// Both expect zeroes: the first wins, the second must then miscompare.
	slot first(compare_and_write_cdb(3, 1), caw_data(std::vector<uint8_t>(512), std::vector<uint8_t>(512, 1)));
	slot second(compare_and_write_cdb(3, 1), caw_data(std::vector<uint8_t>(512), std::vector<uint8_t>(512, 2)));
	test_owner second_owner;
	second_owner.on_wake = [&](command &c) { f.lu->resume(c, f.store); };
	first.start(f, f.owner);
	second.start(f, second_owner);
	CHECK(f.store.queued() == 1);
	while (f.store.queued())
		f.store.complete(0);
	CHECK(first.cmd.status() == SAM_STAT_GOOD);
	REQUIRE(second_owner.done == 1);
	CHECK(second.cmd.status() == SAM_STAT_CHECK_CONDITION);
	CHECK(f.block(3)[0] == 1);
}

namespace {

// An owner for a thread of its own: a parked command is woken from the
// other thread, and resumed here, on its own thread, as a queue worker would.
struct threaded_owner final : command_owner {
	std::mutex m;
	std::condition_variable cv;
	bool done = false;
	bool woken = false;
	void command_done(command &) override
	{
		std::lock_guard g(m);
		done = true;
	}
	void command_wake(command &) override
	{
		std::lock_guard g(m);
		woken = true;
		cv.notify_one();
	}
	// Runs cmd to completion on this thread.
	void run(logical_unit &lu, command &cmd, backstore_queue &q)
	{
		lu.execute(cmd, q);
		std::unique_lock lock(m);
		while (!done) {
			cv.wait(lock, [&] { return woken || done; });
			if (woken) {
				woken = false;
				lock.unlock();
				lu.resume(cmd, q);
				lock.lock();
			}
		}
		done = false;
	}
};

} // namespace

TEST_CASE("COMPARE AND WRITE racing WRITEs from another thread is never split", "[caw][threads]")
{
	lu_fixture f;
	constexpr int ROUNDS = 2000;
	std::vector<uint8_t> same(512, 0x5a);
	data_buffer caw_buf(caw_data(same, same));
	data_buffer write_buf(same);
	auto caw_cdb = compare_and_write_cdb(16, 1);
	auto write_cdb = cdb10(WRITE_10, 16, 1);
	f.fill_block(16, 0x5a);
	command caw_cmd, write_cmd;
	// Catch2 assertions are not thread-safe: count in the threads, check after.
	int caw_good = 0, write_good = 0;
	f.store.set_yield(true);  // widen the windows between requests

	std::thread caw_thread([&] {
		threaded_owner owner;
		for (int i = 0; i < ROUNDS; i++) {
			caw_cmd.reset(caw_cdb, caw_buf.iovs, &owner);
			owner.run(*f.lu, caw_cmd, f.store);
			caw_good += caw_cmd.status() == SAM_STAT_GOOD;
		}
	});
	std::thread write_thread([&] {
		threaded_owner owner;
		for (int i = 0; i < ROUNDS; i++) {
			write_cmd.reset(write_cdb, write_buf.iovs, &owner);
			owner.run(*f.lu, write_cmd, f.store);
			write_good += write_cmd.status() == SAM_STAT_GOOD;
		}
	});
	caw_thread.join();
	write_thread.join();
	CHECK(caw_good == ROUNDS);
	CHECK(write_good == ROUNDS);

	// In the backstore's own order, no WRITE lands between a CAW's read
	// and that CAW's write.
	const block_io *caw_io = &caw_cmd.io();
	bool inside = false;
	int splits = 0;
	for (const auto &rec : f.store.history()) {
		if (rec.io == caw_io)
			inside = rec.op == block_op::read;
		else if (inside && rec.op == block_op::write)
			splits++;
	}
	CHECK(splits == 0);
	CHECK(f.lu->ranges().exclusive_users() == 0);
}

// A backstore with its own atomic compare-and-write (rbd) gets the command
// as one request, without the range lock.
namespace {
lu_fixture offload_fixture()
{
	return lu_fixture([](logical_unit_config &c) { c.caps.compare_and_write = true; });
}
} // namespace

TEST_CASE("COMPARE AND WRITE goes to a backstore that offers it as one request", "[caw]")
{
	lu_fixture f = offload_fixture();
	auto old = pattern(2 * 512, 1), fresh = pattern(2 * 512, 2);
	std::copy(old.begin(), old.end(), f.block(40, 2).begin());
	// Scattered data-out (300-byte pieces): the backstore still gets both
	// halves, in order, as one flat buffer.
	require_good(f.run(compare_and_write_cdb(40, 2), caw_data(old, fresh), 0, 300));
	CHECK(std::equal(fresh.begin(), fresh.end(), f.block(40, 2).begin()));
	auto h = f.store.history();
	REQUIRE(h.size() == 1);
	CHECK(h[0].op == block_op::compare_and_write);
	CHECK(h[0].offset == 40u * 512);
	CHECK(h[0].length == 2u * 512);
	CHECK(f.lu->ranges().exclusive_users() == 0);
}

TEST_CASE("COMPARE AND WRITE offloaded: a miscompare reports the backstore's offset", "[caw]")
{
	lu_fixture f = offload_fixture();
	auto old = pattern(3 * 512, 1), fresh = pattern(3 * 512, 2);
	std::copy(old.begin(), old.end(), f.block(40, 3).begin());
	f.block(40, 3)[1000] ^= 0x01;
	auto r = f.run(compare_and_write_cdb(40, 3), caw_data(old, fresh));
	require_sense(r, MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	CHECK(r.sense.information == 1000u);
	CHECK(f.block(40, 3)[0] == old[0]);  // nothing written
	CHECK(f.store.count(block_op::write) == 0);
}

TEST_CASE("COMPARE AND WRITE offloaded keeps FUA and maps backstore errors", "[caw]")
{
	lu_fixture f = offload_fixture();
	require_good(f.run(compare_and_write_cdb(0, 1, 0x08), std::vector<uint8_t>(1024)));
	CHECK(f.store.history().back().fua);
	f.store.inject(block_op::compare_and_write, -EROFS);
	require_sense(f.run(compare_and_write_cdb(0, 1), std::vector<uint8_t>(1024)), DATA_PROTECT,
		      ASC_WRITE_PROTECTED);
}

TEST_CASE("COMPARE AND WRITE offloaded but refused falls back to the range lock", "[caw]")
{
	lu_fixture f = offload_fixture();
	auto old = pattern(2 * 512, 1), fresh = pattern(2 * 512, 2);
	std::copy(old.begin(), old.end(), f.block(8, 2).begin());
	f.store.inject(block_op::compare_and_write, -EOPNOTSUPP);
	require_good(f.run(compare_and_write_cdb(8, 2), caw_data(old, fresh)));
	CHECK(std::equal(fresh.begin(), fresh.end(), f.block(8, 2).begin()));
	auto h = f.store.history();
	REQUIRE(h.size() == 3);
	CHECK(h[1].op == block_op::read);
	CHECK(h[2].op == block_op::write);
	CHECK(f.lu->ranges().exclusive_users() == 0);
}

// What a networked backstore's failures turn into (rbd: the OSD op timeout,
// and a client blocklisted after another gateway broke its lock).
TEST_CASE("a backstore timeout is ABORTED COMMAND, a fenced or reconnecting backstore NOT READY", "[caw][errors]")
{
	lu_fixture f;
	f.store.inject(block_op::write, -ETIMEDOUT);
	require_sense(f.run(cdb10(0x2a, 0, 1), std::vector<uint8_t>(512)), ABORTED_COMMAND,
		      ASC_LOGICAL_UNIT_COMMUNICATION_TIMEOUT);
	f.store.inject(block_op::read, -ESHUTDOWN);
	require_sense(f.run(cdb10(0x28, 0, 1), {}, 512), NOT_READY,
		      ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION);
	// Reconnecting (rbd reopening after a blocklist): retryable.
	f.store.inject(block_op::write, -ENOTCONN);
	require_sense(f.run(cdb10(0x2a, 0, 1), std::vector<uint8_t>(512)), NOT_READY,
		      ASC_LOGICAL_UNIT_BECOMING_READY);
}

// ORWRITE reads, ORs and writes back: a WRITE between the two would be
// overwritten with the medium's old bytes (scripts/mutants.sh S2: with its
// range lock taken shared, only the scsi fuzz target noticed).
TEST_CASE("a WRITE arriving between ORWRITE's read and write waits for it", "[orwrite]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	f.fill_block(8, 0x0f);
	slot orw(cdb16(ORWRITE_16, 8, 1), std::vector<uint8_t>(512, 0xf0));
	slot write(cdb10(WRITE_10, 8, 1), std::vector<uint8_t>(512, 0xcc));
	test_owner write_owner;
	write_owner.on_wake = [&](command &c) { f.lu->resume(c, f.store); };

	orw.start(f, f.owner);
	REQUIRE(f.store.queued() == 1);  // ORWRITE's read
	write.start(f, write_owner);
	CHECK(f.store.queued() == 1);    // the WRITE is parked, not submitted
	f.store.complete(0);             // read done: ORWRITE writes 0xff
	REQUIRE(f.store.queued() == 1);
	CHECK(f.store.queued_at(0).op == block_op::write);
	CHECK(write_owner.wakes == 0);
	f.store.complete(0);
	CHECK(orw.cmd.status() == SAM_STAT_GOOD);
	CHECK(write_owner.wakes == 1);
	REQUIRE(f.store.queued() == 1);
	f.store.complete(0);
	CHECK(write_owner.done == 1);
	CHECK(f.block(8)[0] == 0xcc);    // the later WRITE is what stays
}

TEST_CASE("ORWRITE waits for a WRITE already in flight before reading", "[orwrite]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	slot write(cdb10(WRITE_10, 8, 1), std::vector<uint8_t>(512, 0xcc));
	slot orw(cdb16(ORWRITE_16, 8, 1), std::vector<uint8_t>(512, 0x03));
	test_owner orw_owner;
	orw_owner.on_wake = [&](command &c) { f.lu->resume(c, f.store); };
	write.start(f, f.owner);
	orw.start(f, orw_owner);
	CHECK(f.store.queued() == 1);  // only the WRITE: ORWRITE waits for it
	f.store.complete(0);
	CHECK(orw_owner.wakes == 1);
	f.store.complete_all();        // ORWRITE's read sees the WRITE's data
	f.store.complete_all();
	CHECK(orw_owner.done == 1);
	CHECK(orw.cmd.status() == SAM_STAT_GOOD);
	CHECK(f.block(8)[0] == 0xcf);
}
