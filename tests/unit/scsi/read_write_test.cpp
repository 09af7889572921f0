// SPDX-License-Identifier: GPL-2.0-or-later
// READ/WRITE 6/10/12/16, FUA, SYNCHRONIZE CACHE, and how backstore results
// (errors, short completions, late completions) become SCSI results.
#include <catch2/catch.hpp>

#include <cerrno>

#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::block_op;

TEST_CASE("WRITE(10) then READ(10) returns the data through split iovecs", "[rw]")
{
	lu_fixture f;
	auto data = pattern(3 * 512, 1);
	require_good(f.run(cdb10(WRITE_10, 5, 3), data, 0, 100));
	CHECK(std::equal(data.begin(), data.end(), f.block(5, 3).begin()));
	auto r = f.run(cdb10(READ_10, 5, 3), {}, 3 * 512, 77);
	require_good(r);
	CHECK(r.read_len == 3 * 512);
	CHECK(r.data_in == data);
}

TEST_CASE("READ(6) and WRITE(6) address with 21 bits", "[rw]")
{
	lu_fixture f([](logical_unit_config &c) { c.num_blocks = 1ull << 22; });
	f.store.bytes().resize((1ull << 21) * 512 + 4096);
	auto data = pattern(512, 3);
	require_good(f.run(cdb6(WRITE_6, 0x1fffff, 1), data));
	auto r = f.run(cdb6(READ_6, 0x1fffff, 1), {}, 512);
	require_good(r);
	CHECK(r.data_in == data);
	CHECK(f.store.history()[0].offset == 0x1fffffull * 512);
}

TEST_CASE("READ(6) with transfer length 0 reads 256 blocks", "[rw]")
{
	lu_fixture f;
	auto r = f.run(cdb6(READ_6, 0, 0), {}, 256 * 512);
	require_good(r);
	CHECK(r.read_len == 256 * 512);
}

TEST_CASE("READ(12) and WRITE(12) move the blocks they name", "[rw]")
{
	lu_fixture f;
	auto data = pattern(2 * 512, 9);
	require_good(f.run(cdb12(WRITE_12, 100, 2), data));
	auto r = f.run(cdb12(READ_12, 100, 2), {}, 2 * 512);
	require_good(r);
	CHECK(r.data_in == data);
}

TEST_CASE("READ(16) and WRITE(16) move the blocks they name", "[rw]")
{
	lu_fixture f;
	auto data = pattern(4 * 512, 11);
	require_good(f.run(cdb16(WRITE_16, 1020, 4), data));
	auto r = f.run(cdb16(READ_16, 1020, 4), {}, 4 * 512);
	require_good(r);
	CHECK(r.data_in == data);
}

TEST_CASE("a transfer length of zero is GOOD and moves nothing", "[rw]")
{
	lu_fixture f;
	require_good(f.run(cdb10(READ_10, 3, 0)));
	require_good(f.run(cdb16(WRITE_16, 3, 0)));
	CHECK(f.store.history().empty());
}

TEST_CASE("a READ past the last block is LBA OUT OF RANGE with the LBA", "[rw]")
{
	lu_fixture f;
	auto r = f.run(cdb10(READ_10, 1023, 2), {}, 1024);
	require_sense(r, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	CHECK(r.sense.information == 1023u);
	CHECK(f.store.history().empty());
}

TEST_CASE("a READ(16) whose LBA plus length wraps around is LBA OUT OF RANGE", "[rw]")
{
	lu_fixture f;
	auto r = f.run(cdb16(READ_16, UINT64_MAX - 1, 4), {}, 2048);
	require_sense(r, ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	CHECK_FALSE(r.sense.information);  // does not fit fixed format
}

TEST_CASE("a WRITE ending on the last block is GOOD", "[rw]")
{
	lu_fixture f;
	require_good(f.run(cdb10(WRITE_10, 1022, 2), std::vector<uint8_t>(1024, 5)));
}

TEST_CASE("a transfer length above the maximum is an invalid field at the length", "[rw]")
{
	lu_fixture f([](logical_unit_config &c) { c.max_transfer_blocks = 8; });
	require_invalid_cdb(f.run(cdb10(READ_10, 0, 9), {}, 9 * 512), 7);
	require_invalid_cdb(f.run(cdb16(WRITE_16, 0, 9), std::vector<uint8_t>(9 * 512)), 10);
}

TEST_CASE("the transfer limit is honoured exactly: max is GOOD, max + 1 is refused", "[rw]")
{
	lu_fixture f;
	f.lu->set_max_transfer_blocks(16);
	require_good(f.run(cdb10(READ_10, 0, 16), {}, 16 * 512));
	require_good(f.run(cdb16(WRITE_16, 0, 16), std::vector<uint8_t>(16 * 512, 3)));
	require_good(f.run(cdb10(VERIFY_10, 0, 16)));
	require_invalid_cdb(f.run(cdb10(READ_10, 0, 17), {}, 17 * 512), 7);
	require_invalid_cdb(f.run(cdb16(WRITE_16, 0, 17), std::vector<uint8_t>(17 * 512)), 10);
	require_invalid_cdb(f.run(cdb10(VERIFY_10, 0, 17)), 7);
	// READ(6)'s 0 means 256 blocks, so it is over a 16-block limit.
	require_invalid_cdb(f.run({READ_6, 0, 0, 0, 0, 0}, {}, 256 * 512), 4);
}

TEST_CASE("a data-out buffer shorter than the CDB's length is refused without I/O", "[rw]")
{
	lu_fixture f;
	auto r = f.run(cdb10(WRITE_10, 0, 4), std::vector<uint8_t>(3 * 512 + 1, 1));
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(f.store.history().empty());
}

TEST_CASE("a data-in buffer shorter than the CDB's length is refused without I/O", "[rw]")
{
	lu_fixture f;
	auto r = f.run(cdb10(READ_10, 0, 4), {}, 512);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(f.store.history().empty());
}

TEST_CASE("a data-in buffer longer than needed reports read_len of the transfer", "[rw]")
{
	lu_fixture f;
	auto r = f.run(cdb10(READ_10, 0, 2), {}, 4096, 300);
	require_good(r);
	CHECK(r.read_len == 1024);
	CHECK(f.store.history()[0].length == 1024);
}

TEST_CASE("WRITE with FUA asks the backstore for a durable write", "[rw]")
{
	lu_fixture f;
	require_good(f.run(cdb10(WRITE_10, 0, 1, 0x08), std::vector<uint8_t>(512)));
	require_good(f.run(cdb10(WRITE_10, 0, 1), std::vector<uint8_t>(512)));
	auto h = f.store.history();
	CHECK(h[0].fua);
	CHECK_FALSE(h[1].fua);
}

TEST_CASE("with the write cache disabled every write is FUA", "[rw]")
{
	lu_fixture f([](logical_unit_config &c) { c.write_cache_enabled = false; });
	require_good(f.run(cdb6(WRITE_6, 0, 1), std::vector<uint8_t>(512)));
	CHECK(f.store.history()[0].fua);
}

TEST_CASE("EIO on a read is MEDIUM ERROR, UNRECOVERED READ ERROR at the LBA", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::read, -EIO);
	auto r = f.run(cdb10(READ_10, 7, 1), {}, 512);
	require_sense(r, MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	CHECK(r.sense.information == 7u);
}

TEST_CASE("EIO on a write is MEDIUM ERROR, WRITE ERROR", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::write, -EIO);
	auto r = f.run(cdb10(WRITE_10, 7, 1), std::vector<uint8_t>(512));
	require_sense(r, MEDIUM_ERROR, ASC_WRITE_ERROR);
	CHECK(r.sense.information == 7u);
}

TEST_CASE("ENOSPC on a write is DATA PROTECT, SPACE ALLOCATION FAILED WRITE PROTECT", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::write, -ENOSPC);
	auto r = f.run(cdb16(WRITE_16, 0, 1), std::vector<uint8_t>(512));
	require_sense(r, DATA_PROTECT, ASC_SPACE_ALLOCATION_FAILED_WRITE_PROTECT);
}

TEST_CASE("EROFS (backing file system remounted read-only) is DATA PROTECT, WRITE PROTECTED", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::write, -EROFS);
	auto r = f.run(cdb16(WRITE_16, 0, 1), std::vector<uint8_t>(512));
	require_sense(r, DATA_PROTECT, ASC_WRITE_PROTECTED);
}

TEST_CASE("another backstore error is HARDWARE ERROR, INTERNAL TARGET FAILURE", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::read, -EINVAL);
	require_sense(f.run(cdb10(READ_10, 0, 1), {}, 512), HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
}

TEST_CASE("a transient backstore shortage is BUSY without sense", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::write, -EAGAIN);
	auto r = f.run(cdb10(WRITE_10, 0, 1), std::vector<uint8_t>(512));
	CHECK(r.status == SAM_STAT_BUSY);
	CHECK(r.sense_bytes.empty());
}

// Short transfers are the backstore's to resume (backstore.h); one that
// still comes back short must not pass for the whole.
TEST_CASE("a short read from the backstore is a MEDIUM ERROR, not GOOD with data missing", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::read, 700);
	auto r = f.run(cdb10(READ_10, 10, 4), {}, 4 * 512, 512);
	require_sense(r, MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	CHECK(f.store.history().size() == 1);
}

TEST_CASE("a short write to the backstore is an error, not GOOD", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::write, 1);
	auto r = f.run(cdb10(WRITE_10, 0, 2), pattern(2 * 512, 33), 0, 333);
	require_sense(r, MEDIUM_ERROR, ASC_WRITE_ERROR);
	CHECK(f.store.count(block_op::write) == 1);
}

TEST_CASE("a deferred completion finishes the command only when it arrives", "[rw]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	data_buffer buf(std::vector<uint8_t>(512, 0x5a));
	std::vector<uint8_t> cdb = cdb10(WRITE_10, 2, 1);
	command cmd;
	cmd.reset(cdb, buf.iovs, &f.owner);
	f.lu->execute(cmd, f.store);
	CHECK(f.owner.done == 0);
	REQUIRE(f.store.queued() == 1);
	f.store.complete(0);
	CHECK(f.owner.done == 1);
	CHECK(cmd.status() == SAM_STAT_GOOD);
	CHECK(f.block(2)[0] == 0x5a);
}

TEST_CASE("SYNCHRONIZE CACHE(10) flushes the named range", "[rw]")
{
	lu_fixture f;
	require_good(f.run(cdb10(SYNCHRONIZE_CACHE_10, 8, 4)));
	auto h = f.store.history();
	REQUIRE(h.size() == 1);
	CHECK(h[0].op == block_op::flush);
	CHECK(h[0].offset == 8 * 512);
	CHECK(h[0].length == 4 * 512);
}

TEST_CASE("SYNCHRONIZE CACHE(16) with zero blocks flushes to the end", "[rw]")
{
	lu_fixture f;
	require_good(f.run(cdb16(SYNCHRONIZE_CACHE_16, 24, 0, 0x02)));
	auto h = f.store.history();
	REQUIRE(h.size() == 1);
	CHECK(h[0].length == (lu_fixture::BLOCKS - 24) * 512);
}

TEST_CASE("SYNCHRONIZE CACHE past the end is LBA OUT OF RANGE", "[rw]")
{
	lu_fixture f;
	require_sense(f.run(cdb10(SYNCHRONIZE_CACHE_10, 1020, 8)), ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
}

TEST_CASE("a failed flush is MEDIUM ERROR, WRITE ERROR", "[rw]")
{
	lu_fixture f;
	f.store.inject(block_op::flush, -EIO);
	require_sense(f.run(cdb10(SYNCHRONIZE_CACHE_10, 0, 0)), MEDIUM_ERROR, ASC_WRITE_ERROR);
}
