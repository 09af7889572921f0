// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/command_ring.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ring/tcmu_abi.h"
#include "tcmud/scsi_limits.h"

namespace tcmud {

namespace {

// SAM's CHECK CONDITION: the one status whose sense the kernel reads.
constexpr uint8_t sam_stat_check_condition = 0x02;

// The most ids one TMR can name that are not repeats: cmd_id is 16 bits.
constexpr size_t max_tmr_ids = 65536;

template <typename T>
void write_at(std::span<std::byte> map, uint64_t off, T v)
{
	std::memcpy(map.data() + off, &v, sizeof(v));
}

} // namespace

setup_result<command_ring> command_ring::attach(std::span<std::byte> map,
						const ring_options &opts)
{
	auto g = read_mailbox(map);
	if (!g)
		return g.error();
	command_ring ring(map, *g, opts);
	if (ring.reset() < 0)
		return unusable_mailbox("cmd_tail outside the command ring");
	return ring;
}

command_ring::command_ring(std::span<std::byte> map, const ring_geometry &g,
			   const ring_options &o)
	: map_(map), geometry_(g), limits_{o.max_iovs_per_command},
	  copies_(o.max_in_flight, o.initial_iovs_per_command),
	  pending_(copies_.capacity())
{
	tmr_ids_.reserve(max_tmr_ids);
}

void command_ring::mark_entry(uint32_t pos)
{
	write_at(map_, uint64_t(geometry_.cmdr_off) + pos + entry_mark_off, entry_mark);
}

bool command_ring::sync_with_kernel()
{
	uint32_t tail = load_cmd_tail(map_);
	bool reset_seen = tail != published_tail_;
	if (!reset_seen) {
		uint32_t head = load_cmd_head(map_);
		// An invalid head is next()'s to report (the ring breaks).
		// Compared on a broken ring too: a reset with the tail at 0
		// leaves the tail and the entries as they were (the kernel
		// clears neither), so until a new entry covers the oldest
		// unanswered one this is the only sign. Unseen, a late answer
		// would go into a stale entry, and the tail moved past it would
		// make the kernel call its ring broken.
		if (valid_position(head) &&
		    distance(published_tail_, head_seen_) > distance(published_tail_, head))
			reset_seen = true;
	}
	if (!reset_seen)
		reset_seen = !tail_entry_still_ours();
	if (!reset_seen)
		return false;
	reset();
	return true;
}

uint32_t command_ring::bytes_published(uint32_t head) const
{
	// Both are < cmdr_size, so this is the distance head_seen_ -> head.
	return head >= head_seen_ ? head - head_seen_
				  : geometry_.cmdr_size - head_seen_ + head;
}

void command_ring::advance(uint32_t len)
{
	// check_framing guaranteed head_seen_ + len <= cmdr_size.
	head_seen_ += len;
	if (head_seen_ == geometry_.cmdr_size)
		head_seen_ = 0;
}

std::optional<ring_event> command_ring::next()
{
	if (broken_)
		return std::nullopt;
	// cmd_head is loaded (and checked) again only once the entries up to
	// the last one we loaded are taken, not once per entry: a batch of
	// entries costs one acquire load and one check. Those entries stay
	// published meanwhile; a reset of the kernel's is sync_with_kernel()'s
	// to see, as before.
	if (head_seen_ == head_known_) {
		uint32_t head = load_cmd_head(map_);
		if (!valid_position(head))
			return break_ring(malformed_reason::head_invalid, 0);
		head_known_ = head;
	}
	const uint32_t head = head_known_;

	// Each pass consumes at least 8 bytes of the published region, so the
	// loop ends after at most cmdr_size / 8 PADs.
	while (head_seen_ != head && !copies_.full()) {
		entry_header h = read_entry_header(map_, geometry_, head_seen_);
		if (auto r = check_framing(h, bytes_published(head), geometry_))
			return break_ring(*r, h.cmd_id);
		if (head_seen_ == published_tail_)
			tail_entry_ = read_entry{{h.pos, h.len_op, h.cmd_id}, h.op == TCMUD_OP_CMD};
		if (h.op == TCMUD_OP_PAD) {
			advance(h.len);
			continue;
		}
		if (h.op == TCMUD_OP_TMR)
			return take_tmr(h);
		return take_command(h);
	}
	return std::nullopt;
}

ring_event command_ring::break_ring(malformed_reason r, uint16_t cmd_id)
{
	broken_ = true;
	return ring_malformed{.cmd_id = cmd_id, .reason = r, .ring_broken = true};
}

ring_event command_ring::take_tmr(const entry_header &h)
{
	advance(h.len);
	ring_tmr tmr;
	if (auto r = parse_tmr_entry(map_, geometry_, h, tmr.tmr_type, tmr_ids_))
		return ring_malformed{.cmd_id = h.cmd_id, .reason = *r};
	tmr.cmd_ids = tmr_ids_;
	return tmr;
}

ring_event command_ring::take_command(const entry_header &h)
{
	// The kernel's idr never hands out an id still in use; if it did, its
	// own completion walk would fail on the second response anyway.
	if (copies_.find(h.cmd_id))
		return break_ring(malformed_reason::duplicate_cmd_id, h.cmd_id);

	entry_copy &copy = copies_.acquire(h.cmd_id);
	pending_.push({h.pos, h.len_op, h.cmd_id});
	advance(h.len);

	auto bad = parse_cmd_entry(map_, geometry_, h, limits_, copy);
	// After parsing: the mark overwrites a request field (iov_cnt) that
	// is copied out by now.
	mark_entry(h.pos);
	if (bad) {
		copy.malformed = true;
		return ring_malformed{.cmd_id = h.cmd_id, .reason = *bad, .needs_response = true};
	}
	ring_command cmd;
	cmd.cmd_id = h.cmd_id;
	cmd.cdb = std::span<const uint8_t>(copy.cdb.data(), copy.cdb_len);
	cmd.iovs = std::span<const iovec>(copy.iovs).first(uint64_t(copy.iov_cnt) +
							 copy.iov_bidi_cnt + copy.iov_dif_cnt);
	cmd.iov_cnt = copy.iov_cnt;
	cmd.iov_bidi_cnt = copy.iov_bidi_cnt;
	cmd.iov_dif_cnt = copy.iov_dif_cnt;
	return cmd;
}

int command_ring::complete(uint16_t cmd_id, uint8_t scsi_status,
			   std::span<const uint8_t> sense, std::optional<uint32_t> read_len)
{
	if (!copies_.find(cmd_id))
		return -ENOENT;
	uint8_t uflags = 0;
	uint32_t len = 0;
	if (read_len && (geometry_.flags & TCMUD_MB_FLAG_CAP_READ_LEN)) {
		uflags |= TCMUD_UFLAG_READ_LEN;
		len = *read_len;
	}
	write_response(cmd_id, uflags, scsi_status, sense, len);
	copies_.release(cmd_id);
	return 0;
}

int command_ring::complete_unknown_op(uint16_t cmd_id)
{
	if (!copies_.find(cmd_id))
		return -ENOENT;
	write_response(cmd_id, TCMUD_UFLAG_UNKNOWN_OP, 0, {}, 0);
	copies_.release(cmd_id);
	return 0;
}

void command_ring::write_response(uint16_t cmd_id, uint8_t uflags, uint8_t scsi_status,
				  std::span<const uint8_t> sense, uint32_t read_len)
{
	// One record per command in flight, and cmd_id is in flight.
	pending_response r = pending_.pop();
	// check_framing made sure r.len >= TCMUD_CMD_ENTRY_SIZE: the response
	// stays inside its entry.
	uint64_t at = uint64_t(geometry_.cmdr_off) + r.pos;
	write_at(map_, at + TCMUD_HDR_LEN_OP_OFF, r.len_op);
	write_at(map_, at + TCMUD_HDR_CMD_ID_OFF, cmd_id);
	write_at(map_, at + TCMUD_HDR_UFLAGS_OFF, uflags);
	write_at(map_, at + TCMUD_RSP_SCSI_STATUS_OFF, scsi_status);
	write_at(map_, at + TCMUD_RSP_SCSI_STATUS_OFF + 1, uint8_t(0));
	write_at(map_, at + entry_mark_off, entry_mark);
	write_at(map_, at + TCMUD_RSP_READ_LEN_OFF, read_len);

	// The kernel reads rsp.sense_buffer only for CHECK CONDITION
	// (tcmu_handle_completion); any other status leaves it alone, so the
	// common GOOD answer skips the 96-byte clear.
	if (scsi_status != sam_stat_check_condition)
		return;
	static_assert(sense_buffer_size == TCMUD_SENSE_BUFFERSIZE);
	size_t n = std::min<size_t>(sense.size(), sense_buffer_size);
	std::byte *dst = map_.data() + at + TCMUD_RSP_SENSE_OFF;
	if (n) // an empty span's data() may be null, which memcpy forbids
		std::memcpy(dst, sense.data(), n);
	std::memset(dst + n, 0, sense_buffer_size - n);
}

bool command_ring::publish()
{
	// Everything before the oldest unanswered CMD entry is either answered
	// or a PAD/TMR the kernel skips; with none pending, all we read is done.
	uint32_t tail = pending_.empty() ? head_seen_ : pending_.front().pos;
	if (tail == published_tail_)
		return false;
	store_cmd_tail(map_, tail);
	published_tail_ = tail;
	// The entry now at the tail is the oldest unanswered one, or none.
	if (pending_.empty())
		tail_entry_.reset();
	else
		tail_entry_ = read_entry{pending_.front(), true};
	return true;
}

int command_ring::reset()
{
	copies_.release_all();
	pending_.clear();
	tmr_ids_.clear();
	uint32_t tail = load_cmd_tail(map_);
	if (!valid_position(tail)) {
		broken_ = true;
		return -EPROTO;
	}
	head_seen_ = head_known_ = published_tail_ = tail;
	tail_entry_.reset();
	broken_ = false;
	++generation_;
	return 0;
}

} // namespace tcmud
