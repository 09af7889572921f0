// SPDX-License-Identifier: GPL-2.0-or-later
// Attaching to a mailbox: a good one is accepted with the kernel's geometry,
// every bad one is refused with a reason and nothing else is read.
#include <catch2/catch.hpp>

#include "ring/tcmu_abi.h"
#include "ring_test_support.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

// attach's refusal: EPROTO and the reason's text.
std::string attach_error(std::span<std::byte> map)
{
	auto ring = command_ring::attach(map, {});
	REQUIRE_FALSE(ring);
	CHECK(ring.error().error == EPROTO);
	return ring.error().message;
}

std::string reason(const char *why)
{
	return std::string("unusable mailbox: ") + why;
}

} // namespace

TEST_CASE("a version 2 mailbox is accepted with the kernel's geometry")
{
	kernel_ring_model model;
	auto ring = attach_ring(model);
	const auto &g = ring.geometry();
	CHECK(g.cmdr_off == 128);
	CHECK(g.cmdr_size == model.cmdr_size());
	CHECK(g.data_off == model.data_off());
	CHECK(g.data_size == model.mapping().size() - model.data_off());
	CHECK(g.flags == 0x7);
}

TEST_CASE("a mailbox whose version is not 2 is refused")
{
	kernel_ring_model model;
	model.mapping()[TCMUD_MB_VERSION_OFF] = std::byte{1};
	CHECK(attach_error(model.mapping()) == reason("mailbox version is not 2"));
}

TEST_CASE("a command ring reaching past the mapping is refused")
{
	kernel_ring_model model;
	model.poke_u32(TCMUD_MB_CMDR_SIZE_OFF, uint32_t(model.mapping().size()));
	CHECK(attach_error(model.mapping()) == reason("command ring outside the mapping"));
}

TEST_CASE("cmdr_off + cmdr_size wrapping 32 bits is refused, not wrapped")
{
	kernel_ring_model model;
	model.poke_u32(TCMUD_MB_CMDR_OFF_OFF, 0xfffff000);
	model.poke_u32(TCMUD_MB_CMDR_SIZE_OFF, 0x2000);
	CHECK(attach_error(model.mapping()) == reason("command ring outside the mapping"));
}

TEST_CASE("a command ring overlapping the mailbox is refused")
{
	kernel_ring_model model;
	model.poke_u32(TCMUD_MB_CMDR_OFF_OFF, 64);
	CHECK(attach_error(model.mapping()) == reason("command ring overlaps the mailbox"));
}

TEST_CASE("a command ring size that is not a multiple of 8 is refused")
{
	kernel_ring_model model;
	model.poke_u32(TCMUD_MB_CMDR_SIZE_OFF, model.cmdr_size() - 4);
	CHECK(attach_error(model.mapping()) == reason("command ring not 8-byte aligned"));
}

TEST_CASE("a command ring too small for one entry is refused")
{
	kernel_ring_model model;
	model.poke_u32(TCMUD_MB_CMDR_SIZE_OFF, 64);
	CHECK(attach_error(model.mapping()) == reason("command ring too small"));
}

TEST_CASE("a mapping with no data area after the ring is refused")
{
	kernel_ring_model model;
	auto map = model.mapping().first(model.data_off());
	CHECK(attach_error(map) == reason("no data area after the command ring"));
}

TEST_CASE("a mapping shorter than the mailbox is refused")
{
	kernel_ring_model model;
	CHECK(attach_error(model.mapping().first(100)) == reason("mapping smaller than the mailbox"));
}

TEST_CASE("a mapping not aligned for atomic mailbox words is refused")
{
	kernel_ring_model model;
	CHECK(attach_error(model.mapping().subspan(2)) == reason("mapping not aligned"));
}

TEST_CASE("a cmd_tail outside the ring at attach is refused")
{
	kernel_ring_model model;
	model.poke_u32(TCMUD_MB_CMD_TAIL_OFF, model.cmdr_size());
	CHECK(attach_error(model.mapping()) == reason("cmd_tail outside the command ring"));
}

TEST_CASE("a classic mailbox has no multi-queue membership; a CAP_MQ one says its queue")
{
	kernel_ring_model model;
	CHECK_FALSE(read_mq_mailbox(model.mapping()));
	auto map = model.mapping();
	uint16_t flags = 0x7 | TCMUD_MB_FLAG_CAP_MQ, n = 4, q = 3;
	std::memcpy(map.data() + TCMUD_MB_FLAGS_OFF, &flags, 2);
	std::memcpy(map.data() + TCMUD_MQ_NR_QUEUES_OFF, &n, 2);
	std::memcpy(map.data() + TCMUD_MQ_QUEUE_OFF, &q, 2);
	auto mq = read_mq_mailbox(map);
	REQUIRE(mq);
	CHECK(mq->nr_queues == 4);
	CHECK(mq->queue == 3);
	// The extension lives in bytes the ring never uses: the ring attaches.
	attach_ring(model);
}

TEST_CASE("only a mailbox with CAP_DATA_FIXED says its data area may be pinned")
{
	kernel_ring_model stock;
	CHECK_FALSE(attach_ring(stock).geometry().data_area_fixed);

	kernel_ring_model fixed({.flags = 0x7 | TCMUD_MB_FLAG_CAP_DATA_FIXED});
	auto ring = attach_ring(fixed);
	CHECK(ring.geometry().data_area_fixed);
	CHECK(ring.geometry().data_off == fixed.data_off());

	// Also with the multi-queue bit beside it (every queue of such a device).
	kernel_ring_model mq({.flags = 0x7 | TCMUD_MB_FLAG_CAP_MQ | TCMUD_MB_FLAG_CAP_DATA_FIXED});
	CHECK(attach_ring(mq).geometry().data_area_fixed);
	kernel_ring_model mq_only({.flags = 0x7 | TCMUD_MB_FLAG_CAP_MQ});
	CHECK_FALSE(attach_ring(mq_only).geometry().data_area_fixed);
}

TEST_CASE("a mailbox with CAP_ZERO_COPY ends the data area where the window starts")
{
	// Stock mailboxes: the data area is everything after the ring.
	kernel_ring_model stock;
	CHECK(attach_ring(stock).geometry().window_size == 0);

	// The model's data area, read as half data area and half window.
	kernel_ring_model zc({.flags = 0x7 | TCMUD_MB_FLAG_CAP_ZERO_COPY});
	size_t map = zc.mapping().size();
	size_t woff = zc.data_off() + (map - zc.data_off()) / 2;
	zc.poke_u64(TCMUD_ZC_WINDOW_OFF_OFF, woff);
	zc.poke_u64(TCMUD_ZC_WINDOW_SIZE_OFF, map - woff);
	{
		auto ring = attach_ring(zc);
		const auto &g = ring.geometry();
		CHECK(g.data_off == zc.data_off());
		CHECK(g.data_size == woff - zc.data_off());
		CHECK(g.window_size == map - woff);
	}

	// A window that does not end the mapping, or starts in the ring.
	zc.poke_u64(TCMUD_ZC_WINDOW_SIZE_OFF, map - woff - 4096);
	CHECK(attach_error(zc.mapping()) == reason("zero-copy window outside the mapping"));
	zc.poke_u64(TCMUD_ZC_WINDOW_OFF_OFF, zc.data_off() - 4096);
	zc.poke_u64(TCMUD_ZC_WINDOW_SIZE_OFF, map - zc.data_off() + 4096);
	CHECK(attach_error(zc.mapping()) == reason("zero-copy window outside the mapping"));
	zc.poke_u64(TCMUD_ZC_WINDOW_OFF_OFF, UINT64_MAX - 8);
	zc.poke_u64(TCMUD_ZC_WINDOW_SIZE_OFF, 0);
	CHECK(attach_error(zc.mapping()) == reason("zero-copy window outside the mapping"));
}
