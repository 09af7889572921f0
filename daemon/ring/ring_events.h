// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What command_ring::next() hands out. These types know nothing of SCSI
// beyond the CDB bytes: the SCSI layer interprets them.
#include <sys/uio.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

namespace tcmud {

// A command the kernel queued. Every span points into storage the ring owns
// for this command (the CDB and the iovec array are COPIED out of the ring,
// because with out-of-order completion the entry's slot may carry another
// command's response, and then new entries, while this one still runs). The
// iovecs themselves point into the data area of the mapping and were checked
// to lie inside it. Valid until complete() for this cmd_id.
struct ring_command {
	uint16_t cmd_id = 0;
	std::span<const uint8_t> cdb;
	// iov_cnt Data-Out/Data-In vectors, then iov_bidi_cnt Data-In vectors of
	// a bidirectional command, then iov_dif_cnt protection vectors.
	std::span<const iovec> iovs;
	uint32_t iov_cnt = 0;
	uint32_t iov_bidi_cnt = 0;
	uint32_t iov_dif_cnt = 0;

	std::span<const iovec> data_iovs() const { return iovs.first(iov_cnt); }
	std::span<const iovec> bidi_iovs() const { return iovs.subspan(iov_cnt, iov_bidi_cnt); }
};

// A task management notification (CAP_TMR). It needs no response: the kernel
// skips TMR entries when it collects completions. cmd_ids is valid until the
// next call to next().
struct ring_tmr {
	uint8_t tmr_type = 0; // TCMU_TMR_*
	std::span<const uint16_t> cmd_ids;
};

enum class malformed_reason : uint8_t {
	// The entry is framed well and the kernel waits for its response: fail
	// the command (complete() with CHECK CONDITION) and go on.
	iov_count,            // iovec array does not fit in the entry
	iov_outside_data_area,
	iov_overflow,         // offset + length wraps
	cdb_outside_mapping,
	cdb_length,           // variable-length CDB longer than max_cdb_length
	tmr_count,            // TMR cmd_cnt does not fit (TMR needs no response)
	// The ring's framing cannot be trusted from here on: next() returns
	// nothing more until reset() (after the kernel's action/reset_ring).
	head_invalid,         // cmd_head outside the ring or misaligned
	zero_length,
	bad_opcode,           // len_op low bits not PAD/CMD/TMR (or length % 8)
	beyond_head,          // entry extends past cmd_head
	crosses_ring_end,     // only a PAD may end the ring; no entry wraps
	short_entry,          // too small to carry a response
	duplicate_cmd_id,     // cmd_id of a command still in flight
};

struct ring_malformed {
	uint16_t cmd_id = 0;
	malformed_reason reason{};
	// True when the kernel waits for a response to cmd_id: the caller must
	// complete() it (with sense) like any command.
	bool needs_response = false;
	// True when the ring stopped: see malformed_reason.
	bool ring_broken = false;
};

using ring_event = std::variant<ring_command, ring_tmr, ring_malformed>;

std::string_view to_string(malformed_reason r);
// The TMR's name as the kernel's TCMU_TMR_* has it ("LUN_RESET"), or
// "UNKNOWN".
std::string_view tmr_name(uint8_t tmr_type);

} // namespace tcmud
