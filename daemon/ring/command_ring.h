// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The TCMU command ring, user side: read what the kernel queued, answer it.
//
// One command_ring belongs to one queue worker and is used from that thread
// only; it takes no locks. Typical loop:
//
//	while (auto ev = ring.next()) { ...dispatch... }
//	...as commands finish: ring.complete(cmd_id, status, sense);
//	if (ring.publish()) uio.notify();  // one uio write per batch
//
// The engine never reads or writes outside the mapping, whatever the kernel
// wrote into it; see entry_parser.h for the checks, mailbox.h for the memory
// ordering, pending_responses.h for how out-of-order responses are placed.
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "ring/entry_copies.h"
#include "ring/entry_parser.h"
#include "ring/mailbox.h"
#include "ring/pending_responses.h"
#include "ring/ring_events.h"
#include "ring/tcmu_abi.h"
#include "tcmud/defaults.h"
#include "tcmud/setup_result.h"

namespace tcmud {

struct ring_options {
	// Commands taken from the ring and not yet completed. When reached,
	// next() leaves further entries in the ring until one completes.
	size_t max_in_flight = default_max_in_flight;
	// iovecs reserved per entry copy up front, and the most one command
	// may bring (more is failed as malformed iov_count). The kernel gives one
	// iovec per run of contiguous data blocks, so 16384 covers 64 MiB even
	// when every 4 KiB block is apart.
	size_t initial_iovs_per_command = 16;
	size_t max_iovs_per_command = 16384;
};

class command_ring {
public:
	// Validates the mailbox and starts reading at the current cmd_tail,
	// once per queue at its set-up. EPROTO and "unusable mailbox: what is
	// wrong" (read_mailbox) when it is not a usable version 2 one.
	static setup_result<command_ring> attach(std::span<std::byte> map,
						 const ring_options &opts);

	// The next entry the kernel published, or nullopt when caught up, when
	// max_in_flight commands are out, or once the ring is broken.
	std::optional<ring_event> next();

	// Writes the response of cmd_id into the oldest unanswered CMD entry.
	// sense is cut to sense_buffer_size (96) bytes and written only with CHECK CONDITION, the
	// one status the kernel copies it for. read_len is passed (TCMU_UFLAG_READ_LEN)
	// only when the kernel offers CAP_READ_LEN. Visible to the kernel after
	// publish(). -ENOENT if cmd_id is not in flight.
	int complete(uint16_t cmd_id, uint8_t scsi_status, std::span<const uint8_t> sense,
		     std::optional<uint32_t> read_len = std::nullopt);
	// complete() for the common answer, GOOD (no sense), inline: every
	// good command ends here. The response's status, its reserved byte,
	// our mark and read_len are adjacent: one 8-byte store on a
	// little-endian host.
	int complete_good(uint16_t cmd_id, uint32_t read_len)
	{
		// Released first, in the same lookup that finds it: nothing
		// below reads the copy.
		if (!copies_.release(cmd_id))
			return -ENOENT;
		uint8_t uflags = TCMUD_UFLAG_READ_LEN;
		if (!(geometry_.flags & TCMUD_MB_FLAG_CAP_READ_LEN))
			uflags = 0, read_len = 0;
		pending_response r = pending_.pop();
		std::byte *at = map_.data() + geometry_.cmdr_off + r.pos;
		std::memcpy(at + TCMUD_HDR_LEN_OP_OFF, &r.len_op, sizeof(r.len_op));
		std::memcpy(at + TCMUD_HDR_CMD_ID_OFF, &cmd_id, sizeof(cmd_id));
		std::memcpy(at + TCMUD_HDR_UFLAGS_OFF, &uflags, sizeof(uflags));
		static_assert(entry_mark_off == TCMUD_RSP_SCSI_STATUS_OFF + 2 &&
			      TCMUD_RSP_READ_LEN_OFF == TCMUD_RSP_SCSI_STATUS_OFF + 4);
		if constexpr (std::endian::native == std::endian::little) {
			// scsi_status 0 (GOOD), __pad1 0, mark, read_len
			uint64_t rsp = uint64_t{entry_mark} << 16 | uint64_t{read_len} << 32;
			std::memcpy(at + TCMUD_RSP_SCSI_STATUS_OFF, &rsp, sizeof(rsp));
		} else {
			uint16_t status_pad = 0, mark = entry_mark;
			std::memcpy(at + TCMUD_RSP_SCSI_STATUS_OFF, &status_pad, sizeof(status_pad));
			std::memcpy(at + entry_mark_off, &mark, sizeof(mark));
			std::memcpy(at + TCMUD_RSP_READ_LEN_OFF, &read_len, sizeof(read_len));
		}
		return 0;
	}
	// Answers cmd_id with TCMU_UFLAG_UNKNOWN_OP: the kernel fails the
	// command itself (passthrough mode reports it as not supported).
	int complete_unknown_op(uint16_t cmd_id);

	// Store-releases cmd_tail past every answered entry and every PAD/TMR
	// already read. True when it moved: then write the uio fd once.
	bool publish();

	// After the kernel's action/reset_ring (cmd_head = cmd_tail = 0): forgets
	// every command in flight and restarts at cmd_tail. -EPROTO if cmd_tail
	// is not a valid position; the ring then stays broken. Starts a new
	// generation.
	int reset();

	// Whether the kernel reset the ring behind our back (an administrator's
	// action/reset_ring on a served device); if so, reset() as above and
	// true. Signs, any one of which is enough: cmd_tail, which only we
	// write, is not where we left it; cmd_head is behind what we already
	// read; the entry at cmd_tail, the first we read and have not yet
	// published past, is not what we read there (a CMD entry lost the mark
	// we put in it when we took it: the kernel zeroes a CMD entry before
	// filling it; a TMR or PAD entry has another header). The last one is
	// the only sign when cmd_tail stood at 0 and the kernel has queued new
	// entries since, as far as we had read: publishing then would move
	// cmd_tail over entries we never read, and the kernel would complete
	// those commands unserved. Cheap: a few loads. A reset exactly between
	// a check and the write it guards cannot be seen; the kernel offers no
	// lock for that.
	bool sync_with_kernel();
	// The same before an answer is written (at least one is owed), in two
	// loads and a compare in the common case: cmd_tail is where we left it
	// and the entry the answer goes into still carries our mark. The head
	// check of sync_with_kernel() is left out here: a reset it alone would
	// see has written no new entry over the one we answer into (the kernel
	// zeroes an entry before filling it, which clears the mark), so the
	// answer overwrites nothing of the kernel's, and publish() is preceded
	// by the full check. A broken ring always takes the full check: its
	// tail may sit at 0, where a silent reset moves only the head, and
	// a late answer must then be dropped, not written.
	bool sync_before_answer()
	{
		if (!broken_ && !pending_.empty() && load_cmd_tail(map_) == published_tail_ &&
		    entry_still_ours(pending_.front()))
			return false;
		return sync_with_kernel();
	}

	// Incremented by every reset(). A command taken in an older generation
	// was failed by the kernel's reset; its cmd_id may already name a new
	// command, so its result must be dropped, never passed to complete().
	uint32_t generation() const { return generation_; }

	size_t in_flight() const { return copies_.in_flight(); }
	// max_in_flight commands are out: next() leaves entries in the ring.
	bool full() const { return copies_.full(); }
	bool broken() const { return broken_; }
	const ring_geometry &geometry() const { return geometry_; }

private:
	command_ring(std::span<std::byte> map, const ring_geometry &g, const ring_options &o);

	// Inline: every fetch and every completion checks positions.
	bool valid_position(uint32_t pos) const
	{
		return pos < geometry_.cmdr_size && pos % TCMUD_OP_ALIGN_SIZE == 0;
	}
	uint32_t distance(uint32_t from, uint32_t to) const
	{
		return to >= from ? to - from : geometry_.cmdr_size - from + to;
	}
	// Put in rsp.__pad2 of each CMD entry we take and answer (it overlays
	// the high half of req.iov_cnt, which is 0 in any entry the kernel
	// writes, and the kernel never reads it back): an entry without it is
	// not ours any more.
	static constexpr uint16_t entry_mark = 0x7cd5;
	static constexpr uint32_t entry_mark_off = TCMUD_RSP_SCSI_STATUS_OFF + 2;
	// What we read at published_tail_, while we have read past it.
	struct read_entry {
		pending_response at;
		bool is_cmd = false; // carries our mark
	};
	// A CMD entry's cmd_id is not compared: an answer goes into the
	// oldest open entry whichever command it answers, and rewrites it.
	bool tail_entry_still_ours() const
	{
		if (!tail_entry_)
			return true;
		const std::byte *at = map_.data() + geometry_.cmdr_off + tail_entry_->at.pos;
		uint32_t len_op;
		std::memcpy(&len_op, at + TCMUD_HDR_LEN_OP_OFF, sizeof(len_op));
		if (len_op != tail_entry_->at.len_op)
			return false;
		if (tail_entry_->is_cmd) {
			uint16_t mark;
			std::memcpy(&mark, at + entry_mark_off, sizeof(mark));
			return mark == entry_mark;
		}
		uint16_t cmd_id;
		std::memcpy(&cmd_id, at + TCMUD_HDR_CMD_ID_OFF, sizeof(cmd_id));
		return cmd_id == tail_entry_->at.cmd_id;
	}
	bool entry_still_ours(const pending_response &r) const
	{
		const std::byte *at = map_.data() + geometry_.cmdr_off + r.pos;
		uint32_t len_op;
		uint16_t cmd_id, mark;
		std::memcpy(&len_op, at + TCMUD_HDR_LEN_OP_OFF, sizeof(len_op));
		std::memcpy(&cmd_id, at + TCMUD_HDR_CMD_ID_OFF, sizeof(cmd_id));
		std::memcpy(&mark, at + entry_mark_off, sizeof(mark));
		return len_op == r.len_op && cmd_id == r.cmd_id && mark == entry_mark;
	}
	void mark_entry(uint32_t pos);
	uint32_t bytes_published(uint32_t head) const;
	void advance(uint32_t len);
	ring_event take_command(const entry_header &h);
	ring_event take_tmr(const entry_header &h);
	ring_event break_ring(malformed_reason r, uint16_t cmd_id);
	void write_response(uint16_t cmd_id, uint8_t uflags, uint8_t scsi_status,
			    std::span<const uint8_t> sense, uint32_t read_len);

	std::span<std::byte> map_;
	ring_geometry geometry_;
	parse_limits limits_;
	entry_copies copies_;
	pending_responses pending_;
	std::vector<uint16_t> tmr_ids_;
	uint32_t head_seen_ = 0; // where the next entry starts
	uint32_t head_known_ = 0; // cmd_head as next() last loaded it, checked
	uint32_t published_tail_ = 0;
	std::optional<read_entry> tail_entry_;
	uint32_t generation_ = 0;
	bool broken_ = false;
};

} // namespace tcmud
