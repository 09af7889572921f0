// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Reading one command ring entry, trusting nothing in it.
//
// Mirror of the kernel's rule ("we must only ever read *data* from the shared
// memory area, not offsets or sizes"): every field is copied out once with
// memcpy into a local, checked, and only the checked copy is used, so the
// kernel changing the bytes meanwhile can at worst make one command fail.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "ring/entry_copies.h"
#include "ring/mailbox.h"
#include "ring/ring_events.h"
#include "ring/tcmu_abi.h"

namespace tcmud {

struct entry_header {
	uint32_t pos = 0;    // offset in the command ring
	uint32_t len_op = 0;
	uint32_t len = 0;    // len_op without the opcode bits
	uint8_t op = 0;
	uint16_t cmd_id = 0;
};

// pos must be 8-aligned and inside the ring, so the 8 header bytes are too.
// Inline (with check_framing): every entry passes both.
inline entry_header read_entry_header(std::span<const std::byte> map, const ring_geometry &g,
				      uint32_t pos)
{
	entry_header h;
	uint64_t at = uint64_t(g.cmdr_off) + pos;
	h.pos = pos;
	std::memcpy(&h.len_op, map.data() + at + TCMUD_HDR_LEN_OP_OFF, sizeof(h.len_op));
	std::memcpy(&h.cmd_id, map.data() + at + TCMUD_HDR_CMD_ID_OFF, sizeof(h.cmd_id));
	h.len = h.len_op & ~uint32_t(TCMUD_OP_MASK);
	h.op = uint8_t(h.len_op & TCMUD_OP_MASK);
	return h;
}

// Framing: may the walk step over this entry? `available` is how many bytes
// the kernel published from pos up to cmd_head. A reason here breaks the ring.
inline std::optional<malformed_reason> check_framing(const entry_header &h, uint32_t available,
						     const ring_geometry &g)
{
	// A CMD entry that passes, nearly every entry, in four compares; the
	// checks below give anything else its reason, in their order.
	if (h.op == TCMUD_OP_CMD && h.len >= TCMUD_CMD_ENTRY_SIZE && h.len <= available &&
	    uint64_t(h.pos) + h.len <= g.cmdr_size) [[likely]]
		return std::nullopt;
	// The opcode shares len_op with the length, so a length that is not a
	// multiple of 8 shows up here as an opcode we do not know.
	if (h.op != TCMUD_OP_PAD && h.op != TCMUD_OP_CMD && h.op != TCMUD_OP_TMR)
		return malformed_reason::bad_opcode;
	if (h.len == 0)
		return malformed_reason::zero_length;
	// The kernel never splits an entry across the ring end; it writes a PAD
	// up to the end instead, so no entry may cross it.
	if (uint64_t(h.pos) + h.len > g.cmdr_size)
		return malformed_reason::crosses_ring_end;
	if (h.len > available)
		return malformed_reason::beyond_head;
	// A CMD entry will carry a response (struct tcmu_cmd_entry): it must be
	// at least that large or writing it would clobber the next entry.
	if (h.op == TCMUD_OP_CMD && h.len < TCMUD_CMD_ENTRY_SIZE)
		return malformed_reason::short_entry;
	return std::nullopt;
}

struct parse_limits {
	size_t max_iovs_per_command = 0;
};

// Copies and checks a CMD entry's CDB and iovecs into `copy`.
std::optional<malformed_reason> parse_cmd_entry(std::span<std::byte> map,
						const ring_geometry &g,
						const entry_header &h,
						const parse_limits &limits,
						entry_copy &copy);

// Copies a TMR entry's type and ids; `ids` must have capacity for 65536.
std::optional<malformed_reason> parse_tmr_entry(std::span<const std::byte> map,
						const ring_geometry &g,
						const entry_header &h,
						uint8_t &type, std::vector<uint16_t> &ids);

} // namespace tcmud
