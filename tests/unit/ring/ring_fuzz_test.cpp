// SPDX-License-Identifier: GPL-2.0-or-later
// Random bytes where the kernel writes: the engine must neither crash nor
// touch memory outside the mapping (run under -Db_sanitize=address,undefined
// to make an out-of-bounds access fail loudly), and every iovec it hands out
// must lie in the data area.
#include <catch2/catch.hpp>

#include <random>

#include "ring/tcmu_abi.h"
#include "ring_test_support.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

constexpr int rounds = 1500;
constexpr int events_per_round = 64;

void check_inside_data_area(const ring_command &cmd, std::span<std::byte> map,
			    size_t data_off)
{
	auto *lo = map.data() + data_off;
	auto *hi = map.data() + map.size();
	for (const auto &v : cmd.iovs) {
		auto *p = static_cast<std::byte *>(v.iov_base);
		REQUIRE(p >= lo);
		REQUIRE(p <= hi);
		REQUIRE(v.iov_len <= size_t(hi - p));
		// Touch every byte: the sanitizer catches what the checks miss.
		std::memset(p, 0xa5, v.iov_len);
	}
	REQUIRE(cmd.cdb.size() <= max_cdb_length);
}

// Takes what the ring offers, answers every command, publishes.
void drain(command_ring &ring, kernel_ring_model &model)
{
	for (int i = 0; i < events_per_round; i++) {
		auto ev = ring.next();
		if (!ev)
			break;
		if (auto *cmd = std::get_if<ring_command>(&*ev)) {
			check_inside_data_area(*cmd, model.mapping(), model.data_off());
			REQUIRE(ring.complete(cmd->cmd_id, 0, {}) == 0);
		} else if (auto *m = std::get_if<ring_malformed>(&*ev)) {
			if (m->needs_response)
				REQUIRE(ring.complete(m->cmd_id, 0x02, {}) == 0);
		}
	}
	ring.publish();
}

void scribble(std::mt19937 &rng, kernel_ring_model &model, int bytes)
{
	auto map = model.mapping();
	std::uniform_int_distribution<uint32_t> pos(0, model.cmdr_size() - 1);
	for (int i = 0; i < bytes; i++)
		map[model.cmdr_off() + pos(rng)] = std::byte(rng());
}

} // namespace

TEST_CASE("random bytes in the command ring never make the engine crash or stray")
{
	model_options o;
	o.cmdr_size = 2048;
	o.data_blocks = 8;
	kernel_ring_model model(o);
	auto ring = attach_ring(model);
	std::mt19937 rng(20240611);

	for (int round = 0; round < rounds; round++) {
		// Start from well-formed entries, then damage some bytes: that
		// reaches deeper than pure noise, which fails at the first header.
		for (int i = 0; i < 3; i++)
			model.queue_command(write10_cdb, pattern(600, uint8_t(i)));
		scribble(rng, model, 1 + round % 24);
		if (round % 5 == 0)
			model.set_cmd_head(uint32_t(rng()) % (model.cmdr_size() + 64));
		drain(ring, model);

		// Whatever state that left, start the next round from a reset ring.
		model.reset_ring();
		REQUIRE(ring.reset() == 0);
	}
	SUCCEED("no crash, no stray access");
}
