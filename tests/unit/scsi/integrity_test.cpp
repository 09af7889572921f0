// SPDX-License-Identifier: GPL-2.0-or-later
// The SCSI-layer halves of issue 14's integrity fixes: durability of
// deallocation with the write cache off (F1), UNMAP reading its list once
// (F4), page-aligned private buffers for O_DIRECT (F5), no stale bytes past
// a short data-in response (F6), and zero-block UNMAP descriptors (F7).
#include <catch2/catch.hpp>

#include <cstdint>

#include "byte_order.h"
#include "iovec_buffer.h"
#include "scsi_harness.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::block_io;
using tcmud::block_op;

namespace {

constexpr uint8_t WS_UNMAP = 0x08;

std::vector<uint8_t> unmap_list(std::initializer_list<std::pair<uint64_t, uint32_t>> ds)
{
	std::vector<uint8_t> l(8 + 16 * ds.size());
	put_be16(l, 0, static_cast<uint16_t>(l.size() - 2));
	put_be16(l, 2, static_cast<uint16_t>(16 * ds.size()));
	std::size_t at = 8;
	for (auto [lba, blocks] : ds) {
		put_be64(l, at, lba);
		put_be32(l, at + 8, blocks);
		at += 16;
	}
	return l;
}

std::vector<uint8_t> unmap_cdb(std::size_t length)
{
	return cdb10(UNMAP, 0, static_cast<uint16_t>(length));
}

void wce(logical_unit_config &c, bool on) { c.write_cache_enabled = on; }

// A command run by hand, for the deferred store.
struct slot {
	std::vector<uint8_t> cdb;
	data_buffer buf;
	command cmd;
	slot(std::vector<uint8_t> c, std::vector<uint8_t> data) : cdb(std::move(c)), buf(std::move(data)) {}
	void start(lu_fixture &f)
	{
		cmd.reset(cdb, buf.iovs, &f.owner);
		f.lu->execute(cmd, f.store);
	}
};

bool page_aligned(const void *p)
{
	return reinterpret_cast<uintptr_t>(p) % 4096 == 0;
}

} // namespace

TEST_CASE("F1: with WCE=0 every discard of UNMAP is FUA; with WCE=1 none is", "[integrity][unmap]")
{
	for (bool on : {false, true}) {
		lu_fixture f([&](logical_unit_config &c) { wce(c, on); });
		auto list = unmap_list({{4, 4}, {32, 8}});
		require_good(f.run(unmap_cdb(list.size()), list));
		auto h = f.store.history();
		REQUIRE(h.size() == 2);
		for (const auto &r : h) {
			CHECK(r.op == block_op::discard);
			CHECK(r.fua == !on);
		}
	}
}

TEST_CASE("F1: with WCE=0 WRITE SAME of zeroes (UNMAP or not) asks for FUA", "[integrity][write_same]")
{
	for (uint8_t flags : {uint8_t(0), WS_UNMAP}) {
		lu_fixture f([](logical_unit_config &c) { wce(c, false); });
		require_good(f.run(cdb16(WRITE_SAME_16, 8, 16, flags), std::vector<uint8_t>(512, 0)));
		auto h = f.store.history();
		REQUIRE(h.size() == 1);
		CHECK(h[0].op != block_op::write);
		CHECK(h[0].fua);
	}
}

TEST_CASE("F4: UNMAP discards what it checked, even if the data-out buffer changes meanwhile",
	  "[integrity][unmap]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	f.fill_block(0, 0x11, 1024);
	slot s(unmap_cdb(8 + 32), unmap_list({{4, 4}, {32, 8}}));
	s.start(f);
	REQUIRE(f.store.queued() == 1);
	CHECK(f.store.queued_at(0).offset == 4 * 512);
	// The shared buffer is rewritten between the two discards: the
	// second descriptor now points at blocks 600..699, outside the span
	// the command locked ([4, 40)).
	put_be64(s.buf.bytes, 8 + 16, 600);
	put_be32(s.buf.bytes, 8 + 16 + 8, 100);
	f.store.complete(0);
	REQUIRE(f.store.queued() == 1);
	CHECK(f.store.queued_at(0).offset == 32 * 512);
	CHECK(f.store.queued_at(0).length == 8 * 512);
	f.store.complete(0);
	CHECK(f.owner.done == 1);
	CHECK(s.cmd.status() == SAM_STAT_GOOD);
	CHECK(f.block(600, 100)[0] == 0x11);
}

TEST_CASE("F5: the buffers WRITE SAME, COMPARE AND WRITE and VERIFY give the backstore are page aligned",
	  "[integrity][direct]")
{
	lu_fixture f;
	f.store.set_mode(ram_backstore::mode::deferred);
	auto block = pattern(512, 7);
	// Several rounds: a plain heap buffer is page aligned now and then.
	for (int round = 0; round < 4; ++round) {
		slot ws(cdb16(WRITE_SAME_16, 8, 2), block);
		ws.start(f);
		REQUIRE(f.store.queued() == 1);
		for (const iovec &v : f.store.queued_at(0).iov)
			CHECK(page_aligned(v.iov_base));
		f.store.complete_all();

		auto caw_data = pattern(1024, 9);
		slot caw(compare_and_write_cdb(16, 1), caw_data);
		caw.start(f);
		REQUIRE(f.store.queued() == 1);
		CHECK(f.store.queued_at(0).op == block_op::read);
		CHECK(page_aligned(f.store.queued_at(0).iov[0].iov_base));
		f.store.complete_all();

		slot verify(cdb10(VERIFY_10, 20, 3, BYTCHK_DATA), pattern(3 * 512, 3));
		verify.start(f);
		REQUIRE(f.store.queued() == 1);
		CHECK(page_aligned(f.store.queued_at(0).iov[0].iov_base));
		f.store.complete_all();
	}
}

TEST_CASE("F6: a data-in response shorter than the buffer leaves zeroes after it, not old data",
	  "[integrity][inquiry]")
{
	lu_fixture f;
	// A buffer that held another command's data (the ring reuses blocks).
	data_buffer buf(std::vector<uint8_t>(4096, 0xee), 1000);
	command cmd;
	auto cdb = inquiry_cdb(false, 0, 4096);
	cmd.reset(cdb, buf.iovs, &f.owner);
	f.lu->execute(cmd, f.store);
	REQUIRE(cmd.status() == SAM_STAT_GOOD);
	REQUIRE(cmd.read_len() > 0);
	REQUIRE(cmd.read_len() < 4096);
	for (std::size_t i = cmd.read_len(); i < buf.bytes.size(); ++i)
		REQUIRE(buf.bytes[i] == 0);
}

TEST_CASE("F7: an UNMAP descriptor of zero blocks past the capacity is not an error",
	  "[integrity][unmap]")
{
	lu_fixture f;
	f.fill_block(0, 0x11, 8);
	auto list = unmap_list({{0, 8}, {lu_fixture::BLOCKS + 100, 0}});
	require_good(f.run(unmap_cdb(list.size()), list));
	auto h = f.store.history();
	REQUIRE(h.size() == 1);
	CHECK(h[0].offset == 0);
}
