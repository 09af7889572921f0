// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Small helpers shared by the ring tests.
#include <catch2/catch.hpp>

#include <cstring>
#include <numeric>
#include <vector>

#include "kernel_ring_model.h"
#include "ring/command_ring.h"

namespace tcmud::test {

inline command_ring attach_ring(kernel_ring_model &model, const ring_options &opts = {})
{
	auto ring = command_ring::attach(model.mapping(), opts);
	INFO("attach: " << (ring ? std::string("ok") : ring.error().what()));
	REQUIRE(ring);
	return std::move(*ring);
}

inline ring_command next_command(command_ring &ring)
{
	auto ev = ring.next();
	REQUIRE(ev.has_value());
	REQUIRE(std::holds_alternative<ring_command>(*ev));
	return std::get<ring_command>(*ev);
}

inline ring_malformed next_malformed(command_ring &ring)
{
	auto ev = ring.next();
	REQUIRE(ev.has_value());
	REQUIRE(std::holds_alternative<ring_malformed>(*ev));
	return std::get<ring_malformed>(*ev);
}

inline std::vector<uint8_t> pattern(size_t n, uint8_t seed)
{
	std::vector<uint8_t> v(n);
	for (size_t i = 0; i < n; i++)
		v[i] = uint8_t(seed + i * 7);
	return v;
}

// Concatenates what the iovecs point at.
inline std::vector<uint8_t> read_iovs(std::span<const iovec> iovs)
{
	std::vector<uint8_t> out;
	for (const auto &v : iovs) {
		auto *p = static_cast<const uint8_t *>(v.iov_base);
		out.insert(out.end(), p, p + v.iov_len);
	}
	return out;
}

inline void write_iovs(std::span<const iovec> iovs, std::span<const uint8_t> data)
{
	for (const auto &v : iovs) {
		size_t n = std::min(v.iov_len, data.size());
		std::memcpy(v.iov_base, data.data(), n);
		data = data.subspan(n);
	}
}

inline size_t iov_bytes(std::span<const iovec> iovs)
{
	size_t n = 0;
	for (const auto &v : iovs)
		n += v.iov_len;
	return n;
}

inline const std::vector<uint8_t> read10_cdb = {0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0};
inline const std::vector<uint8_t> write10_cdb = {0x2a, 0, 0, 0, 0, 0, 0, 0, 8, 0};
inline const std::vector<uint8_t> tur_cdb = {0x00, 0, 0, 0, 0, 0};

} // namespace tcmud::test
