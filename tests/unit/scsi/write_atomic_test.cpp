// SPDX-License-Identifier: GPL-2.0-or-later
// WRITE ATOMIC(16): each CDB field, the Block Limits atomic fields, RWF_ATOMIC
// requests where the backstore can, and atomicity against READs, stepped
// (deferred backstore) and raced (two threads over a store whose writes land
// piece by piece). Each atomicity test also runs with the READ exclusion
// switched off and requires the tear to show, so it can fail.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "byte_order.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::block_op;

namespace {

std::vector<uint8_t> atomic_cdb(uint64_t lba, uint16_t blocks, uint8_t byte1 = 0,
				uint16_t boundary = 0)
{
	std::vector<uint8_t> c(16);
	c[0] = WRITE_ATOMIC_16;
	c[1] = byte1;
	put_be64(c, 2, lba);
	put_be16(c, 10, boundary);
	put_be16(c, 12, blocks);
	return c;
}

constexpr uint8_t FUA = 0x08;

std::vector<uint8_t> block_limits(lu_fixture &f)
{
	auto r = f.run(inquiry_cdb(true, 0xb0, 64), {}, 64);
	require_good(r);
	return r.data_in;
}

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

bool uniform(std::span<const uint8_t> bytes)
{
	return std::all_of(bytes.begin(), bytes.end(), [&](uint8_t b) { return b == bytes[0]; });
}

} // namespace

TEST_CASE("Block Limits reports the atomic fields WRITE ATOMIC honours", "[atomic]")
{
	lu_fixture f;
	auto d = block_limits(f);
	CHECK(get_be32(d, 44) == 1024 * 1024 / 512);  // 1 MiB worth by default
	CHECK(get_be32(d, 48) == 0);                   // no alignment
	CHECK(get_be32(d, 52) == 0);                   // no granularity
	CHECK(get_be32(d, 56) == 0);                   // no atomic boundaries
	CHECK(get_be32(d, 60) == 0);
}

TEST_CASE("the atomic maximum never exceeds MAXIMUM TRANSFER LENGTH", "[atomic]")
{
	lu_fixture f([](logical_unit_config &c) { c.max_transfer_blocks = 64; });
	CHECK(get_be32(block_limits(f), 44) == 64);
	require_invalid_cdb(f.run(atomic_cdb(0, 65), std::vector<uint8_t>(65 * 512)), 12);
}

TEST_CASE("a backstore with RWF_ATOMIC units sets the atomic fields", "[atomic]")
{
	lu_fixture f([](logical_unit_config &c) {
		c.caps.atomic_write_unit_min = 4096;
		c.caps.atomic_write_unit_max = 65536;
	});
	auto d = block_limits(f);
	CHECK(get_be32(d, 44) == 128);
	CHECK(get_be32(d, 48) == 8);
	CHECK(get_be32(d, 52) == 8);
}

TEST_CASE("WRITE ATOMIC writes the blocks", "[atomic]")
{
	lu_fixture f;
	auto data = pattern(4 * 512, 7);
	require_good(f.run(atomic_cdb(10, 4), data, 0, 700));
	CHECK(std::equal(data.begin(), data.end(), f.block(10, 4).begin()));
	REQUIRE(f.store.count(block_op::write) == 1);
	CHECK_FALSE(f.store.history().back().fua);
	CHECK_FALSE(f.store.history().back().atomic);  // RAM store: no RWF_ATOMIC
	CHECK(f.lu->atomic_writes().in_flight() == 0);
	CHECK(f.lu->ranges().exclusive_users() == 0);
}

TEST_CASE("WRITE ATOMIC FUA, and WCE = 0, write durably", "[atomic]")
{
	lu_fixture f;
	require_good(f.run(atomic_cdb(0, 1, FUA), std::vector<uint8_t>(512)));
	CHECK(f.store.history().back().fua);
	f.lu->set_write_cache_enabled(false);
	require_good(f.run(atomic_cdb(0, 1), std::vector<uint8_t>(512)));
	CHECK(f.store.history().back().fua);
}

TEST_CASE("WRITE ATOMIC with a non-zero ATOMIC BOUNDARY is an invalid field", "[atomic]")
{
	lu_fixture f;
	require_invalid_cdb(f.run(atomic_cdb(0, 2, 0, 1), std::vector<uint8_t>(1024)), 10);
	CHECK(f.store.count(block_op::write) == 0);
}

TEST_CASE("WRITE ATOMIC at an LBA off the ATOMIC ALIGNMENT is an invalid field", "[atomic]")
{
	lu_fixture f([](logical_unit_config &c) { c.atomic_alignment_blocks = 8; });
	CHECK(get_be32(block_limits(f), 48) == 8);
	require_invalid_cdb(f.run(atomic_cdb(4, 8), std::vector<uint8_t>(8 * 512)), 2);
	require_good(f.run(atomic_cdb(16, 8), std::vector<uint8_t>(8 * 512)));
	CHECK(f.store.count(block_op::write) == 1);
}

TEST_CASE("WRITE ATOMIC off the TRANSFER LENGTH GRANULARITY is an invalid field", "[atomic]")
{
	lu_fixture f([](logical_unit_config &c) { c.atomic_granularity_blocks = 4; });
	CHECK(get_be32(block_limits(f), 52) == 4);
	require_invalid_cdb(f.run(atomic_cdb(0, 6), std::vector<uint8_t>(6 * 512)), 12);
	require_good(f.run(atomic_cdb(0, 8), std::vector<uint8_t>(8 * 512)));
}

TEST_CASE("WRITE ATOMIC longer than MAXIMUM ATOMIC TRANSFER LENGTH is an invalid field", "[atomic]")
{
	lu_fixture f([](logical_unit_config &c) { c.max_atomic_transfer_blocks = 16; });
	require_invalid_cdb(f.run(atomic_cdb(0, 17), std::vector<uint8_t>(17 * 512)), 12);
	require_good(f.run(atomic_cdb(0, 16), std::vector<uint8_t>(16 * 512)));
}

TEST_CASE("WRITE ATOMIC of zero blocks is GOOD and writes nothing", "[atomic]")
{
	lu_fixture f;
	require_good(f.run(atomic_cdb(5, 0)));
	CHECK(f.store.count(block_op::write) == 0);
	CHECK(f.lu->atomic_writes().in_flight() == 0);
}

TEST_CASE("WRITE ATOMIC past the end is LBA OUT OF RANGE", "[atomic]")
{
	lu_fixture f;
	auto r = f.run(atomic_cdb(lu_fixture::BLOCKS - 1, 2), std::vector<uint8_t>(1024));
	require_sense(r, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	CHECK(r.sense.information == lu_fixture::BLOCKS - 1);
	require_good(f.run(atomic_cdb(lu_fixture::BLOCKS - 1, 1), std::vector<uint8_t>(512)));
	// LBA + length wrapping around 2^64 is out of range too.
	require_sense(f.run(atomic_cdb(UINT64_MAX, 2), std::vector<uint8_t>(1024)),
		      ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
}

TEST_CASE("WRITE ATOMIC reserved bits and WRPROTECT are invalid fields", "[atomic]")
{
	lu_fixture f;
	std::vector<uint8_t> one(512);
	require_invalid_cdb(f.run(atomic_cdb(0, 1, 0x04), one), 1, 2);  // reserved
	require_invalid_cdb(f.run(atomic_cdb(0, 1, 0x20), one), 1, 5);  // WRPROTECT
	auto c = atomic_cdb(0, 1);
	c[14] = 0x40;  // reserved above GROUP NUMBER
	require_invalid_cdb(f.run(c, one), 14, 6);
	c = atomic_cdb(0, 1);
	c[15] = 0x04;  // NACA
	require_invalid_cdb(f.run(c, one), 15, 2);
	CHECK(f.store.count(block_op::write) == 0);
	// DPO is a valid bit.
	require_good(f.run(atomic_cdb(0, 1, 0x10), one));
}

TEST_CASE("WRITE ATOMIC checks fields, then length, then range, then the buffer", "[atomic]")
{
	lu_fixture f([](logical_unit_config &c) {
		c.atomic_alignment_blocks = 8;
		c.max_atomic_transfer_blocks = 16;
	});
	// boundary before alignment, alignment before the maximum length
	require_invalid_cdb(f.run(atomic_cdb(4, 32, 0, 1)), 10);
	require_invalid_cdb(f.run(atomic_cdb(4, 32)), 2);
	// the maximum length before the LBA range
	require_invalid_cdb(f.run(atomic_cdb(lu_fixture::BLOCKS, 32)), 12);
	// the LBA range before the data buffer
	require_sense(f.run(atomic_cdb(lu_fixture::BLOCKS, 8)), ILLEGAL_REQUEST,
		      ASC_LBA_OUT_OF_RANGE);
	require_sense(f.run(atomic_cdb(0, 8), std::vector<uint8_t>(7 * 512)), ILLEGAL_REQUEST,
		      ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(f.store.count(block_op::write) == 0);
}

TEST_CASE("a failed WRITE ATOMIC is a medium error and lets go of the range", "[atomic]")
{
	lu_fixture f;
	f.store.inject(block_op::write, -EIO);
	auto r = f.run(atomic_cdb(20, 2), std::vector<uint8_t>(1024));
	require_sense(r, MEDIUM_ERROR, ASC_WRITE_ERROR);
	CHECK(r.sense.information == 20u);
	CHECK(f.lu->atomic_writes().in_flight() == 0);
	CHECK(f.lu->ranges().exclusive_users() == 0);
	require_good(f.run(cdb10(READ_10, 20, 2), {}, 1024));
}

TEST_CASE("WRITE ATOMIC asks the backstore for RWF_ATOMIC in its units only", "[atomic]")
{
	lu_fixture f([](logical_unit_config &c) {
		c.caps.atomic_write_unit_min = 512;
		c.caps.atomic_write_unit_max = 8192;
	});
	auto data = pattern(8 * 512, 3);
	// Naturally aligned power of two, data in 100-byte pieces: one buffer.
	require_good(f.run(atomic_cdb(8, 8), data, 0, 100));
	REQUIRE(f.store.history().size() == 1);
	CHECK(f.store.history().back().atomic);
	CHECK(std::equal(data.begin(), data.end(), f.block(8, 8).begin()));
	// Not a multiple of its length: atomic by the range lock only.
	require_good(f.run(atomic_cdb(4, 8), data));
	CHECK_FALSE(f.store.history().back().atomic);
	// Not a power of two.
	require_good(f.run(atomic_cdb(0, 3), std::vector<uint8_t>(3 * 512)));
	CHECK_FALSE(f.store.history().back().atomic);
	// A plain WRITE in the same slot never is.
	require_good(f.run(cdb10(WRITE_10, 8, 8), data));
	CHECK_FALSE(f.store.history().back().atomic);
}

TEST_CASE("REPORT SUPPORTED OPERATION CODES lists WRITE ATOMIC(16)", "[atomic]")
{
	lu_fixture f;
	std::vector<uint8_t> c = {MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPERATION_CODES, 0x01,
				  WRITE_ATOMIC_16, 0, 0, 0, 0, 0, 64, 0, 0};
	auto r = f.run(c, {}, 64);
	require_good(r);
	CHECK((r.data_in[1] & 0x07) == 0x03);  // SUPPORT: supported as in the standard
	CHECK(get_be16(r.data_in, 2) == 16);
	CHECK(r.data_in[5] == 0x18);  // usage byte 1: DPO, FUA
}

// The stepped tests: a WRITE ATOMIC of four blocks of 0xbb over 0xaa is seen
// half done by the backstore (complete_part), as a buffered file shows a
// write mid-copy; a READ of the same blocks must return all old or all new.
namespace {

struct stepped {
	lu_fixture f;
	slot write{atomic_cdb(100, 4), std::vector<uint8_t>(4 * 512, 0xbb)};
	slot read{cdb10(READ_10, 100, 4), std::vector<uint8_t>(4 * 512)};
	test_owner read_owner;
	explicit stepped(bool exclusion)
		: f([exclusion](logical_unit_config &c) { c.atomic_read_exclusion = exclusion; })
	{
		f.store.set_mode(ram_backstore::mode::deferred);
		f.fill_block(100, 0xaa, 4);
		read_owner.on_wake = [this](command &c) { f.lu->resume(c, f.store); };
	}
	void finish_all()
	{
		for (int i = 0; i < 8 && f.store.queued(); i++)
			f.store.complete(0);
	}
	std::span<const uint8_t> read_data() const { return read.buf.bytes; }
};

} // namespace

TEST_CASE("a READ arriving during a WRITE ATOMIC waits for all of it", "[atomic]")
{
	stepped s(true);
	s.write.start(s.f, s.f.owner);
	REQUIRE(s.f.store.queued() == 1);
	s.f.store.complete_part(0, 2 * 512);  // half the new data is in
	s.read.start(s.f, s.read_owner);
	CHECK(s.f.store.queued() == 1);       // the READ is parked, not read
	s.finish_all();
	REQUIRE(s.read_owner.done == 1);
	CHECK(s.read.cmd.status() == SAM_STAT_GOOD);
	CHECK(s.read_data()[0] == 0xbb);
	CHECK(uniform(s.read_data()));
	CHECK(s.f.lu->ranges().exclusive_users() == 0);
}

TEST_CASE("without the READ exclusion the same READ sees a torn write", "[atomic]")
{
	stepped s(false);
	s.write.start(s.f, s.f.owner);
	s.f.store.complete_part(0, 2 * 512);
	s.read.start(s.f, s.read_owner);
	REQUIRE(s.f.store.queued() == 2);
	s.f.store.complete(1);                // the READ, mid-write
	REQUIRE(s.read_owner.done == 1);
	CHECK_FALSE(uniform(s.read_data()));  // what the test above rules out
	s.finish_all();
}

TEST_CASE("a READ already running when a WRITE ATOMIC starts is read again", "[atomic]")
{
	stepped s(true);
	s.read.start(s.f, s.read_owner);
	REQUIRE(s.f.store.queued() == 1);     // the READ, not yet carried out
	s.write.start(s.f, s.f.owner);
	REQUIRE(s.f.store.queued() == 2);     // reads hold no lock: the write goes
	s.f.store.complete_part(1, 2 * 512);
	s.f.store.complete(0);                // the READ sees half the write...
	CHECK(s.read_owner.done == 0);        // ...so it is not returned
	CHECK(s.f.store.queued() == 1);       // and waits for the write
	s.finish_all();
	REQUIRE(s.read_owner.done == 1);
	CHECK(s.read.cmd.status() == SAM_STAT_GOOD);
	CHECK(s.read_data()[0] == 0xbb);
	CHECK(uniform(s.read_data()));
	CHECK(s.f.store.count(block_op::read) == 2);
}

TEST_CASE("without the READ exclusion a READ running across the write is torn", "[atomic]")
{
	stepped s(false);
	s.read.start(s.f, s.read_owner);
	s.write.start(s.f, s.f.owner);
	s.f.store.complete_part(1, 2 * 512);
	s.f.store.complete(0);
	REQUIRE(s.read_owner.done == 1);
	CHECK_FALSE(uniform(s.read_data()));
	s.finish_all();
}

TEST_CASE("a READ of other blocks does not wait for a WRITE ATOMIC", "[atomic]")
{
	stepped s(true);
	s.write.start(s.f, s.f.owner);
	slot other(cdb10(READ_10, 200, 4), std::vector<uint8_t>(4 * 512));
	other.start(s.f, s.read_owner);
	CHECK(s.f.store.queued() == 2);
	s.finish_all();
	CHECK(s.read_owner.done == 1);
}

// Two threads: one alternates WRITE ATOMICs of 16 blocks of 0x11 and 0x22,
// the other READs the same 16 blocks; the store copies writes 512 bytes at a
// time and waits for a read after the first, so unprotected reads do tear.
namespace {

struct threaded_owner final : command_owner {
	std::atomic<bool> done{false};
	std::atomic<bool> woken{false};
	void command_done(command &) override { done = true; }
	void command_wake(command &) override { woken = true; }
	void run(logical_unit &lu, command &cmd, tcmud::backstore_queue &q)
	{
		done = false;
		lu.execute(cmd, q);
		while (!done) {
			if (woken.exchange(false))
				lu.resume(cmd, q);
			else
				std::this_thread::yield();
		}
	}
};

// Reads until the writer has done `writes` WRITE ATOMICs; returns how many
// reads were torn.
int torn_reads(bool exclusion, int writes)
{
	lu_fixture f([exclusion](logical_unit_config &c) { c.atomic_read_exclusion = exclusion; });
	f.store.set_piecewise_writes(true);
	f.fill_block(0, 0x11, 16);
	std::atomic<int> written{0};
	std::thread writer([&] {
		threaded_owner owner;
		command cmd;
		data_buffer a(std::vector<uint8_t>(16 * 512, 0x11)), b(std::vector<uint8_t>(16 * 512, 0x22));
		auto cdb = atomic_cdb(0, 16);
		for (int i = 0; i < writes; i++) {
			cmd.reset(cdb, (i % 2 ? a : b).iovs, &owner);
			owner.run(*f.lu, cmd, f.store);
			written++;
		}
	});
	int torn = 0;
	threaded_owner owner;
	command cmd;
	data_buffer buf(std::vector<uint8_t>(16 * 512));
	auto cdb = cdb10(READ_10, 0, 16);
	while (written < writes) {
		cmd.reset(cdb, buf.iovs, &owner);
		owner.run(*f.lu, cmd, f.store);
		torn += !uniform(buf.bytes);
	}
	writer.join();
	return torn;
}

} // namespace

TEST_CASE("concurrent READs never see a WRITE ATOMIC torn", "[atomic][threads]")
{
	CHECK(torn_reads(true, 100) == 0);
	// The same run without the exclusion does tear: the test can fail.
	CHECK(torn_reads(false, 100) > 0);
}
