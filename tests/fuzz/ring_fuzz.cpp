// SPDX-License-Identifier: GPL-2.0-or-later
// The ring engine (daemon/ring) driven by an action script, differential
// against the in-process kernel model (tests/support/kernel_ring_model).
//
// The script queues commands and TMRs the way target_core_user does, takes
// them, completes them in any order (status, sense, Data-In, READ_LEN, or
// UNKNOWN_OP), publishes, lets the model collect, rewrites shared memory
// between calls, and resets the ring from the kernel side (telling the ring,
// or leaving it to find out by sync_with_kernel()).
//
// Oracles while the ring holds only what the model wrote ("clean"):
//   - next() hands out exactly the queued entries, in ring order, each CDB
//     and Data-Out byte as queued, every iovec inside the data area and the
//     Data-Out/Data-In split as queued; never a malformed event;
//   - never more than max_in_flight commands out; complete() of an id not in
//     flight is -ENOENT;
//   - what the model collects is exactly what was answered, nothing
//     unanswered (the tail never passes an open entry), status, sense,
//     Data-In and READ_LEN as answered; the model never calls the ring broken;
//   - once everything taken is answered and published, the model has it all.
// Rewriting an entry the daemon took and has not yet written a response
// into must change nothing (it copied what it needs). Responses go into the
// oldest such entries in ring order, whichever command they answer (the
// kernel finds commands by the cmd_id in the header), so those are the
// youngest taken entries, as many as commands are still open. Rewriting anything the daemon has not
// read yet (or cmd_head) makes the ring untrusted: until the next reset only
// the safety oracles hold (nothing outside the mapping, iovecs in the data
// area, every entry that needs a response can get one).
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "fuzz_support.h"
#include "kernel_ring_model.h"
#include "ring/command_ring.h"
#include "ring/tcmu_abi.h"

using namespace tcmud;
using tcmud::fuzz::input;
using tcmud::test::kernel_ring_model;
using tcmud::test::model_options;

namespace {

struct queued {
	bool is_cmd = true;
	uint16_t cmd_id = 0;
	uint32_t pos = 0, len = 0;
	std::vector<uint8_t> cdb;
	std::vector<uint8_t> data_out;
	bool data_out_known = true; // false once the data area was rewritten
	size_t data_in = 0;
	uint8_t tmr_type = 0;
	std::vector<uint16_t> tmr_ids;
};

struct taken {
	uint16_t cmd_id = 0;
	uint32_t pos = 0, len = 0;
	size_t data_in = 0;
	std::vector<iovec> in_iovs; // where Data-In goes
	bool malformed = false;
};

struct answer {
	uint8_t status = 0;
	bool unknown_op = false;
	std::vector<uint8_t> sense;
	std::optional<uint32_t> read_len;
	std::vector<uint8_t> data_in; // what was written to the Data-In iovecs
	size_t data_in_len = 0;
	bool data_in_known = true; // false once the data area was rewritten
};

std::vector<uint8_t> make_cdb(input &in)
{
	uint8_t op = in.u8();
	if (op == 0x7f)
		op = 0x7e; // variable length CDBs: the ring's own unit tests
	static const size_t group_length[8] = {6, 10, 10, 12, 16, 12, 10, 10};
	std::vector<uint8_t> cdb(group_length[op >> 5]);
	cdb[0] = op;
	auto rest = in.bytes(cdb.size() - 1);
	std::copy(rest.begin(), rest.end(), cdb.begin() + 1);
	return cdb;
}

std::vector<uint8_t> concat(std::span<const iovec> iovs)
{
	std::vector<uint8_t> out;
	for (const auto &v : iovs) {
		auto *p = static_cast<const uint8_t *>(v.iov_base);
		out.insert(out.end(), p, p + v.iov_len);
	}
	return out;
}

class driver {
public:
	driver(input &in) : in_(in)
	{
		model_options o;
		o.cmdr_size = uint32_t(in.range(1, 4) * 1024 - 128);
		o.data_blocks = uint32_t(in.range(1, 16));
		o.block_size = 512u << in.range(0, 3);
		o.flags = uint16_t(TCMUD_MB_FLAG_CAP_OOOC | TCMUD_MB_FLAG_CAP_TMR |
				   (in.flag() ? TCMUD_MB_FLAG_CAP_READ_LEN : 0));
		read_len_cap_ = o.flags & TCMUD_MB_FLAG_CAP_READ_LEN;
		opts_.max_in_flight = in.range(1, 8);
		opts_.initial_iovs_per_command = in.range(1, 4);
		model_.emplace(o);
		auto r = command_ring::attach(model_->mapping(), opts_);
		FUZZ_CHECK(r.ok(), "attach failed on the model's fresh mailbox");
		ring_.emplace(std::move(*r));
	}

	void run()
	{
		while (!in_.empty()) {
			switch (in_.u8() % 10) {
			case 0:
			case 1: queue_command(); break;
			case 2: queue_tmr(); break;
			case 3:
			case 4: take(); break;
			case 5:
			case 6: complete(); break;
			case 7: publish_and_collect(); break;
			case 8: scribble(); break;
			case 9: kernel_reset(); break;
			}
		}
		finish();
	}

private:
	kernel_ring_model &model() { return *model_; }
	command_ring &ring() { return *ring_; }

	uint32_t entry_len(uint32_t pos)
	{
		uint32_t len_op;
		std::memcpy(&len_op, model().mapping().data() + model().cmdr_off() + pos, 4);
		return len_op & ~uint32_t(TCMUD_OP_MASK);
	}

	void queue_command()
	{
		queued q;
		q.cdb = make_cdb(in_);
		size_t max = 3 * 4096;
		size_t out = in_.flag() ? in_.range(1, max) : 0;
		q.data_in = in_.flag() ? in_.range(1, max) : 0;
		q.data_out.resize(out);
		fuzz::fill_ramp(q.data_out, uint8_t(out));
		auto id = model().queue_command(q.cdb, q.data_out, q.data_in);
		if (!id)
			return;
		q.cmd_id = *id;
		q.pos = model().last_entry_pos();
		q.len = entry_len(q.pos);
		fifo_.push_back(std::move(q));
	}

	void queue_tmr()
	{
		queued q;
		q.is_cmd = false;
		q.tmr_type = in_.u8();
		size_t n = in_.range(0, 6);
		for (size_t i = 0; i < n; i++)
			q.tmr_ids.push_back(in_.u16());
		if (!model().queue_tmr(q.tmr_type, q.tmr_ids))
			return;
		q.pos = model().last_entry_pos();
		q.len = entry_len(q.pos);
		fifo_.push_back(std::move(q));
	}

	void check_iovs_inside(const ring_command &c)
	{
		auto map = model().mapping();
		auto *lo = map.data() + model().data_off();
		auto *hi = map.data() + map.size();
		for (const auto &v : c.iovs) {
			auto *p = static_cast<std::byte *>(v.iov_base);
			FUZZ_CHECK(p >= lo && p <= hi && v.iov_len <= size_t(hi - p),
				   "an iovec outside the data area");
		}
		FUZZ_CHECK(c.cdb.size() <= max_cdb_length, "CDB longer than max_cdb_length");
		FUZZ_CHECK(c.iov_cnt + c.iov_bidi_cnt + c.iov_dif_cnt == c.iovs.size(),
			   "iovec counts disagree with the array");
	}

	void take()
	{
		size_t n = in_.range(1, 8);
		for (size_t i = 0; i < n; i++) {
			size_t before = ring().in_flight();
			auto ev = ring().next();
			if (!ev) {
				// Caught up, or full: nothing queued may be left
				// behind unless the slots are all in use.
				if (clean_ && !fifo_.empty() && !ring().broken())
					FUZZ_CHECK(before >= opts_.max_in_flight,
						   "next() stopped with entries published and slots free");
				return;
			}
			FUZZ_CHECK(before < opts_.max_in_flight || !std::holds_alternative<ring_command>(*ev),
				   "next() handed out a command beyond max_in_flight");
			if (auto *c = std::get_if<ring_command>(&*ev))
				on_command(*c);
			else if (auto *t = std::get_if<ring_tmr>(&*ev))
				on_tmr(*t);
			else
				on_malformed(std::get<ring_malformed>(*ev));
		}
	}

	void on_command(const ring_command &c)
	{
		check_iovs_inside(c);
		taken t;
		t.cmd_id = c.cmd_id;
		if (clean_) {
			FUZZ_CHECK(!fifo_.empty() && fifo_.front().is_cmd,
				   "next() returned a command where none was queued");
			queued q = std::move(fifo_.front());
			fifo_.pop_front();
			FUZZ_CHECK(c.cmd_id == q.cmd_id, "command taken out of ring order");
			FUZZ_CHECK(std::equal(c.cdb.begin(), c.cdb.end(), q.cdb.begin(), q.cdb.end()),
				   "CDB differs from what was queued");
			bool bidi = !q.data_out.empty() && q.data_in;
			std::span<const iovec> out_iovs = c.data_iovs();
			if (bidi) {
				FUZZ_CHECK(!q.data_out_known || concat(out_iovs) == q.data_out,
					   "Data-Out bytes differ");
				t.in_iovs.assign(c.bidi_iovs().begin(), c.bidi_iovs().end());
			} else if (!q.data_out.empty()) {
				FUZZ_CHECK(!q.data_out_known || concat(out_iovs) == q.data_out,
					   "Data-Out bytes differ");
				FUZZ_CHECK(c.iov_bidi_cnt == 0, "bidi vectors on a Data-Out command");
			} else {
				t.in_iovs.assign(out_iovs.begin(), out_iovs.end());
			}
			size_t in_total = 0;
			for (const auto &v : t.in_iovs)
				in_total += v.iov_len;
			FUZZ_CHECK(in_total == q.data_in, "Data-In buffer length differs");
			t.data_in = q.data_in;
			t.pos = q.pos;
			t.len = q.len;
		}
		if (clean_)
			unanswered_entries_.push_back({t.pos, t.len});
		FUZZ_CHECK(!open_.count(c.cmd_id), "a cmd_id handed out twice");
		open_[c.cmd_id] = std::move(t);
		FUZZ_CHECK(ring().in_flight() == open_.size(), "in_flight() disagrees");
	}

	void on_tmr(const ring_tmr &t)
	{
		if (!clean_)
			return;
		FUZZ_CHECK(!fifo_.empty() && !fifo_.front().is_cmd,
			   "next() returned a TMR where none was queued");
		queued q = std::move(fifo_.front());
		fifo_.pop_front();
		FUZZ_CHECK(t.tmr_type == q.tmr_type, "TMR type differs");
		FUZZ_CHECK(std::equal(t.cmd_ids.begin(), t.cmd_ids.end(), q.tmr_ids.begin(),
				      q.tmr_ids.end()),
			   "TMR ids differ");
	}

	void on_malformed(const ring_malformed &m)
	{
		FUZZ_CHECK(!clean_, std::string("malformed event on a clean ring: ") +
					    std::string(to_string(m.reason)));
		if (m.needs_response) {
			FUZZ_CHECK(!open_.count(m.cmd_id), "malformed entry reuses an open cmd_id");
			taken t;
			t.cmd_id = m.cmd_id;
			t.malformed = true;
			open_[m.cmd_id] = t;
		}
		FUZZ_CHECK(m.ring_broken == ring().broken(), "ring_broken flag disagrees");
	}

	void complete()
	{
		if (open_.empty()) {
			// An id that is not in flight.
			uint16_t id = in_.u16();
			int rc = id & 1 ? ring().complete_good(id, 0) : ring().complete(id, 0, {});
			FUZZ_CHECK(rc == -ENOENT, "complete() of an id not in flight did not fail");
			return;
		}
		auto it = open_.begin();
		std::advance(it, in_.range(0, open_.size() - 1));
		taken t = std::move(it->second);
		open_.erase(it);
		answer a;
		uint8_t how = in_.u8();
		a.unknown_op = how % 8 == 0;
		// complete_good(), the queue worker's answer for GOOD: status 0,
		// no sense, read_len always given.
		bool good_answer = how % 8 == 1;
		if (a.unknown_op) {
			FUZZ_CHECK(ring().complete_unknown_op(t.cmd_id) == 0, "complete_unknown_op failed");
		} else {
			a.status = in_.u8();
			if (good_answer)
				a.status = 0;
			size_t sense_len = in_.range(0, 120);
			a.sense.resize(sense_len);
			for (size_t i = 0; i < sense_len; i++)
				a.sense[i] = uint8_t(t.cmd_id + i * 3 + 1);
			if (in_.flag() || good_answer)
				a.read_len = uint32_t(in_.range(0, t.data_in + 8));
			a.data_in_len = t.data_in;
			uint8_t seed = in_.u8();
			for (const auto &v : t.in_iovs) {
				auto *p = static_cast<uint8_t *>(v.iov_base);
				fuzz::fill_ramp({p, v.iov_len}, uint8_t(seed + a.data_in.size()));
				a.data_in.insert(a.data_in.end(), p, p + v.iov_len);
			}
			int rc = good_answer ? ring().complete_good(t.cmd_id, *a.read_len)
					     : ring().complete(t.cmd_id, a.status, a.sense, a.read_len);
			FUZZ_CHECK(rc == 0, "complete() of a command in flight failed");
		}
		FUZZ_CHECK(ring().in_flight() == open_.size(), "in_flight() disagrees after complete");
		response_written();
		if (!t.malformed && clean_)
			answered_[t.cmd_id] = std::move(a);
	}

	void publish_and_collect()
	{
		// The queue worker's full check before each publish: on a ring
		// only the model wrote, no reset happened, and none may be seen
		// (one would drop every answer not yet published).
		if (clean_ && !header_scribbled_) {
			uint32_t generation = ring().generation();
			FUZZ_CHECK(!ring().sync_with_kernel() && ring().generation() == generation,
				   "sync_with_kernel() saw a reset that never happened");
		}
		ring().publish();
		size_t before = model().completions().size();
		model().handle_completions();
		if (!clean_)
			return;
		FUZZ_CHECK(!model().broken(), "the kernel model found the ring broken");
		const auto &done = model().completions();
		bool read_len_cap = read_len_cap_;
		for (size_t i = before; i < done.size(); i++) {
			const auto &c = done[i];
			auto it = answered_.find(c.cmd_id);
			FUZZ_CHECK(it != answered_.end(),
				   "the kernel collected a command that was never answered");
			const answer &a = it->second;
			if (a.unknown_op) {
				FUZZ_CHECK(c.uflags & TCMUD_UFLAG_UNKNOWN_OP, "UNKNOWN_OP flag lost");
			} else {
				FUZZ_CHECK(c.scsi_status == a.status, "status differs");
				// The kernel reads sense only with CHECK CONDITION, and
				// only then does the ring write it (command_ring.h).
				size_t n = std::min<size_t>(a.sense.size(), TCMUD_SENSE_BUFFERSIZE);
				if (a.status == 0x02) {
					FUZZ_CHECK(std::equal(a.sense.begin(),
							      a.sense.begin() + ptrdiff_t(n),
							      c.sense.begin()),
						   "sense differs");
					FUZZ_CHECK(std::all_of(c.sense.begin() + ptrdiff_t(n),
							       c.sense.end(),
							       [](uint8_t b) { return b == 0; }),
						   "stale bytes after the sense");
				}
				bool want_flag = a.read_len && read_len_cap;
				FUZZ_CHECK(bool(c.uflags & TCMUD_UFLAG_READ_LEN) == want_flag,
					   "READ_LEN flag differs");
				if (want_flag)
					FUZZ_CHECK(c.read_len == *a.read_len, "read_len differs");
				size_t len = a.data_in_len;
				if (want_flag && *a.read_len && *a.read_len < len)
					len = *a.read_len;
				FUZZ_CHECK(c.data_in.size() == len, "Data-In length differs");
				FUZZ_CHECK(!a.data_in_known ||
						   std::equal(c.data_in.begin(), c.data_in.end(),
							      a.data_in.begin()),
					   "Data-In differs");
			}
			answered_.erase(it);
		}
	}

	// Rewrites shared memory the way a misbehaving kernel could.
	void scribble()
	{
		auto map = model().mapping();
		uint8_t what = in_.u8() % 4;
		if (what == 0) {
			// The data area: the engine never reads it itself.
			size_t off = model().data_off() + in_.range(0, map.size() - model().data_off() - 1);
			map[off] = std::byte(in_.u8());
			for (auto &q : fifo_)
				q.data_out_known = false;
			for (auto &[id, a] : answered_)
				a.data_in_known = false;
			return;
		}
		if (what == 1) {
			model().set_cmd_head(uint32_t(in_.range(0, model().cmdr_size() + 16)));
			clean_ = false;
			head_rewritten_ = true;
			return;
		}
		uint32_t pos = uint32_t(in_.range(0, model().cmdr_size() - 1));
		std::byte value = std::byte(in_.u8());
		// Inside a taken entry no response went into yet: must not matter.
		bool open_entry = false;
		for (const auto &[epos, elen] : unanswered_entries_) {
			if (pos < epos || pos >= epos + elen)
				continue;
			open_entry = true;
			// Its header or the mark the ring put in rsp.__pad2
			// (command_ring.h): rewritten, the ring may take the
			// entry for a new one of the kernel's and reset, the
			// safe way to be wrong.
			if (pos - epos < TCMUD_RSP_SCSI_STATUS_OFF + 4)
				header_scribbled_ = true;
		}
		if (!open_entry) {
			// Answered entries the kernel has not collected belong to
			// the kernel's reading; leave them. Anything else is
			// unread input: the ring is untrusted from here.
			if (clean_ && covers_unread(pos))
				clean_ = false;
			else if (clean_)
				return;
		}
		map[model().cmdr_off() + pos] = value;
	}

	void response_written()
	{
		if (!unanswered_entries_.empty())
			unanswered_entries_.pop_front();
	}

	// Is ring offset pos inside an entry queued and not yet taken?
	bool covers_unread(uint32_t pos) const
	{
		for (const auto &q : fifo_)
			if (pos >= q.pos && pos < q.pos + q.len)
				return true;
		return false;
	}

	// The kernel resets the ring: tcmud told (its own reset, as after
	// action/reset_ring's notice), or not (an administrator's reset of a
	// served device): then the queue worker's next sync_with_kernel(),
	// which it calls before each batch, completion and publish, must see
	// it whenever anything of the old ring could still be written to.
	//
	// Not told, the kernel may also have queued new entries into the reset
	// ring before the worker looks again. When cmd_tail stood at 0 and the
	// new entries reach as far as the worker had read, neither cmd_tail
	// nor cmd_head gives the reset away; the mark the worker put in the
	// oldest unanswered entry, which the kernel's zeroing of its new entry
	// wipes, is then the only sign. Those entries are what the ring must
	// take next, seen or not.
	void kernel_reset()
	{
		// One byte, as before refills existed: bit 0 told, bit 1 refilled
		// (the committed inputs keep their meaning where bit 1 is clear).
		const uint8_t how = in_.u8();
		bool told = how & 1;
		bool refilled = !told && (how & 2);
		model().reset_ring();
		std::deque<queued> after;
		if (refilled) {
			std::swap(after, fifo_);
			for (size_t n = in_.range(1, 3); n > 0; n--)
				queue_command();
			std::swap(after, fifo_);
		}
		if (told) {
			FUZZ_CHECK(ring().reset() == 0, "reset() refused the kernel's reset ring");
		} else {
			uint32_t generation = ring().generation();
			bool seen = ring().sync_with_kernel();
			FUZZ_CHECK(seen == (ring().generation() != generation),
				   "sync_with_kernel() and generation() disagree");
			// Unseen only when nothing is in flight and the ring
			// stood at 0, as the kernel leaves it; broken or not,
			// whatever entries were rewritten. Not after a rewritten
			// cmd_head: reading up to it may have gone round the
			// ring past the tail, and then no position tells.
			FUZZ_CHECK(seen || ring().in_flight() == 0 || head_rewritten_,
				   "a kernel reset went unseen with commands in flight");
			// Left unseen, the worker finds out later (the mark of
			// a new entry, or recover_broken_ring resetting a broken
			// ring): a reset here stands for that, so the script
			// goes on from a ring both sides agree on.
			if (!seen && (ring().broken() || ring().in_flight() > 0))
				FUZZ_CHECK(ring().reset() == 0, "reset() refused an untrusted ring");
		}
		for (const auto &[id, t] : open_)
			FUZZ_CHECK(ring().complete(id, 0, {}) == -ENOENT,
				   "a command from before the reset could still be answered");
		FUZZ_CHECK(ring().in_flight() == 0, "commands in flight after reset");
		open_.clear();
		answered_.clear();
		fifo_.clear();
		unanswered_entries_.clear();
		clean_ = true;
		head_rewritten_ = false;
		header_scribbled_ = false;
		fifo_ = std::move(after);
	}

	// Answer everything, publish: the model must have collected all of it.
	void finish()
	{
		for (int round = 0; round < 1000; round++) {
			while (!open_.empty()) {
				taken &t = open_.begin()->second;
				FUZZ_CHECK(ring().complete(t.cmd_id, 0, {}) == 0, "final complete() failed");
				response_written();
				if (!t.malformed && clean_) {
					answer a;
					a.data_in = concat(t.in_iovs);
					a.data_in_len = t.data_in;
					answered_[t.cmd_id] = std::move(a);
				}
				open_.erase(open_.begin());
			}
			publish_and_collect();
			if (!clean_ || ring().broken())
				return;
			auto ev = ring().next();
			if (!ev)
				break;
			if (auto *c = std::get_if<ring_command>(&*ev))
				on_command(*c);
			else if (auto *t = std::get_if<ring_tmr>(&*ev))
				on_tmr(*t);
			else
				on_malformed(std::get<ring_malformed>(*ev));
		}
		FUZZ_CHECK(fifo_.empty(), "queued entries never handed out");
		FUZZ_CHECK(answered_.empty(), "answered commands the kernel never collected");
		FUZZ_CHECK(model().in_flight() == 0, "the kernel still waits for commands");
	}

	input &in_;
	ring_options opts_;
	std::optional<kernel_ring_model> model_;
	std::optional<command_ring> ring_;
	std::deque<queued> fifo_;
	std::map<uint16_t, taken> open_;
	std::map<uint16_t, answer> answered_;
	std::deque<std::pair<uint32_t, uint32_t>> unanswered_entries_; // pos, len
	bool clean_ = true;
	bool head_rewritten_ = false; // since the last reset
	bool header_scribbled_ = false; // an open entry's header or mark, since the last reset
	bool read_len_cap_ = false;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input in(data, size);
	driver d(in);
	d.run();
	return 0;
}
