// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/entry_parser.h"

#include <algorithm>
#include <cstring>

#include "ring/tcmu_abi.h"

namespace tcmud {

namespace {

template <typename T>
T read_at(std::span<const std::byte> map, uint64_t off)
{
	T v;
	std::memcpy(&v, map.data() + off, sizeof(v));
	return v;
}

uint64_t entry_start(const ring_geometry &g, const entry_header &h)
{
	return uint64_t(g.cmdr_off) + h.pos;
}

struct iov_counts {
	uint32_t cnt, bidi, dif;
	uint64_t total() const { return uint64_t(cnt) + bidi + dif; }
};

std::optional<malformed_reason> copy_iovs(std::span<std::byte> map, const ring_geometry &g,
					  uint64_t array_off, uint64_t total,
					  entry_copy &copy)
{
	auto one = [&](uint64_t i, iovec *out) -> std::optional<malformed_reason> {
		uint64_t base = read_at<uint64_t>(map, array_off + i * TCMUD_IOVEC_SIZE);
		uint64_t len = read_at<uint64_t>(map, array_off + i * TCMUD_IOVEC_SIZE + 8);
		if (base + len < base)
			return malformed_reason::iov_overflow;
		// iov_base is an offset from the start of the mapping; the vector
		// must lie wholly in the data area, never in the mailbox or ring.
		if (base < g.data_off || base > map.size() || len > map.size() - base)
			return malformed_reason::iov_outside_data_area;
		*out = iovec{map.data() + base, size_t(len)};
		return std::nullopt;
	};
	// One vector, the usual case (the kernel gives one per run of
	// contiguous data blocks): no loop; a copy's vector always has room
	// for one (entry_copy).
	if (total == 1) [[likely]]
		return one(0, copy.iovs.data());
	// Grows only (see entry_copies::acquire); entries past total are stale.
	if (copy.iovs.size() < total)
		copy.iovs.resize(total);
	for (uint64_t i = 0; i < total; i++)
		if (auto r = one(i, &copy.iovs[i]))
			return r;
	return std::nullopt;
}

std::optional<malformed_reason> copy_cdb(std::span<const std::byte> map, uint64_t cdb_off,
					 entry_copy &copy)
{
	if (cdb_off >= map.size())
		return malformed_reason::cdb_outside_mapping;
	uint64_t room = map.size() - cdb_off;

	// The opcode (and for 0x7f, byte 7) decides the length: copy that prefix
	// first and decide from the copy, not from the shared bytes. 16 bytes
	// where the mapping has them: every CDB but a variable-length one is
	// then copied by one fixed-size move, not a library call.
	size_t prefix;
	if (room >= 16) {
		prefix = 16;
		std::memcpy(copy.cdb.data(), map.data() + cdb_off, 16);
	} else {
		prefix = size_t(std::min<uint64_t>(8, room));
		std::memcpy(copy.cdb.data(), map.data() + cdb_off, prefix);
	}
	size_t len = scsi_cdb_length(std::span<const uint8_t>(copy.cdb.data(), prefix));
	if (len == 0)
		return prefix < 8 ? malformed_reason::cdb_outside_mapping
				  : malformed_reason::cdb_length;
	if (len > room)
		return malformed_reason::cdb_outside_mapping;
	if (len > prefix)
		std::memcpy(copy.cdb.data() + prefix, map.data() + cdb_off + prefix, len - prefix);
	copy.cdb_len = uint16_t(len);
	return std::nullopt;
}

} // namespace

std::optional<malformed_reason> parse_cmd_entry(std::span<std::byte> map,
						const ring_geometry &g,
						const entry_header &h,
						const parse_limits &limits,
						entry_copy &copy)
{
	uint64_t at = entry_start(g, h);
	iov_counts n{read_at<uint32_t>(map, at + TCMUD_REQ_IOV_CNT_OFF),
		     read_at<uint32_t>(map, at + TCMUD_REQ_IOV_BIDI_CNT_OFF),
		     read_at<uint32_t>(map, at + TCMUD_REQ_IOV_DIF_CNT_OFF)};
	uint64_t cdb_off = read_at<uint64_t>(map, at + TCMUD_REQ_CDB_OFF_OFF);

	// total < 2^34, so the product below cannot wrap.
	uint64_t total = n.total();
	if (total > limits.max_iovs_per_command ||
	    TCMUD_REQ_IOV_OFF + total * TCMUD_IOVEC_SIZE > h.len)
		return malformed_reason::iov_count;
	if (auto r = copy_iovs(map, g, at + TCMUD_REQ_IOV_OFF, total, copy))
		return r;
	if (auto r = copy_cdb(map, cdb_off, copy))
		return r;
	copy.iov_cnt = n.cnt;
	copy.iov_bidi_cnt = n.bidi;
	copy.iov_dif_cnt = n.dif;
	return std::nullopt;
}

std::optional<malformed_reason> parse_tmr_entry(std::span<const std::byte> map,
						const ring_geometry &g,
						const entry_header &h,
						uint8_t &type, std::vector<uint16_t> &ids)
{
	ids.clear();
	if (h.len < TCMUD_TMR_ENTRY_SIZE)
		return malformed_reason::tmr_count;
	uint64_t at = entry_start(g, h);
	type = read_at<uint8_t>(map, at + TCMUD_TMR_TYPE_OFF);
	uint32_t cnt = read_at<uint32_t>(map, at + TCMUD_TMR_CMD_CNT_OFF);
	if (cnt > ids.capacity() ||
	    TCMUD_TMR_CMD_IDS_OFF + uint64_t(cnt) * sizeof(uint16_t) > h.len)
		return malformed_reason::tmr_count;
	ids.resize(cnt); // within capacity: no allocation
	std::memcpy(ids.data(), map.data() + at + TCMUD_TMR_CMD_IDS_OFF,
		    cnt * sizeof(uint16_t));
	return std::nullopt;
}

} // namespace tcmud
