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
#include <optional>
#include <span>
#include <vector>

#include "ring/entry_copies.h"
#include "ring/mailbox.h"
#include "ring/ring_events.h"

namespace tcmud {

struct entry_header {
	uint32_t pos = 0;    // offset in the command ring
	uint32_t len_op = 0;
	uint32_t len = 0;    // len_op without the opcode bits
	uint8_t op = 0;
	uint16_t cmd_id = 0;
};

// pos must be 8-aligned and inside the ring, so the 8 header bytes are too.
entry_header read_entry_header(std::span<const std::byte> map, const ring_geometry &g,
			       uint32_t pos);

// Framing: may the walk step over this entry? `available` is how many bytes
// the kernel published from pos up to cmd_head. A reason here breaks the ring.
std::optional<malformed_reason> check_framing(const entry_header &h, uint32_t available,
					      const ring_geometry &g);

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
