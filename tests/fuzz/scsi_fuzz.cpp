// SPDX-License-Identifier: GPL-2.0-or-later
// SCSI execution (daemon/scsi) over a deferred in-memory backstore, driven by
// an action script: start commands (any CDB, shaped or raw, with any data
// buffer cut into any iovecs; UNMAP and EXTENDED COPY parameter lists are
// built aimed at the medium, since random bytes almost never make one that
// passes the checks and copies), complete backstore requests in any order and
// with any outcome (full, short, 0, EIO, ENOSPC, EAGAIN, ECANCELED), resume
// commands the range lock woke, rewrite a running command's Data-Out buffer,
// flip the write cache and D_SENSE (directly, as another initiator's MODE
// SELECT would, or by a MODE SELECT in the script). A second LUN, with a
// deferred medium of its own, is in the copy-target registry: EXTENDED COPY
// lists name one or both, its backstore may be unreachable, and the copy
// policy (tcmud.conf copy_groups) may not join the two LUNs.
//
// Oracles:
//   - when the policy does not join the two LUNs, nothing ever reaches the
//     second LUN's backstore: no queue is opened on it, no request issued;
//   - every request that changes the medium is issued while its command
//     holds the range lock, inside the locked LBAs, and never overlaps a
//     range another command holds exclusively on the same LUN; a request
//     of a command holding the lock stays inside it;
//   - COMPARE AND WRITE and ORWRITE are atomic, seen from the medium and
//     not from the lock: from the moment one issues its read until it
//     finishes, no other command's change to the blocks it read is issued,
//     and none is still at the backstore when it reads them;
//   - every request lies inside the capacity, a read/write's iovecs add up
//     to its length, one request at a time per command; a request from the
//     command's bounce buffer is aligned for O_DIRECT;
//   - with the write cache off (WCE=0), GOOD is returned only once every
//     change the command made is durable: written with FUA, or followed by
//     a successful flush; on the second LUN likewise, by its own WCE;
//   - command_done exactly once per execute, never while the command still
//     has a request at the backstore or holds the range lock;
//   - status and sense agree (CHECK CONDITION has fixed or descriptor sense,
//     as D_SENSE was when the command began; GOOD has none), read_len never
//     exceeds the buffer;
//   - at the end, with every request completed and every wake-up resumed,
//     no command is left unfinished (no lost wake-up, no deadlock).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "copy_targets.h"
#include "fuzz_support.h"
#include "logical_unit.h"
#include "scsi_constants.h"

using namespace tcmud;
using namespace tcmud::scsi;
using tcmud::fuzz::input;

namespace {

constexpr size_t max_commands = 4;

struct slot {
	command cmd;
	bool busy = false;
	int done_calls = 0;
	std::vector<uint8_t> buffer;
	std::vector<iovec> iovs;
	bool data_out = false;
	bool rewritten = false;        // its Data-Out changed while it ran
	bool wce_off_at_start = false;
	bool d_sense_at_start = false;
	bool unsynced = false;         // changed the medium, not yet durable
	bool unsynced_by_fallocate = false;
	bool woken = false;
	// The second LUN (EXTENDED COPY's other device).
	bool other_wce_off_at_start = false;
	bool other_unsynced = false;
	int lock_lun = 0; // whose range lock it holds: that of its last request
	// A read-modify-write (COMPARE AND WRITE, ORWRITE) between its first
	// read and its end: the bytes of LUN 0 it has read, [first, end).
	bool rmw_open = false;
	uint64_t rmw_first = 0, rmw_end = 0;
};

// A request at a backstore: of this LUN (0) or the other one (1).
struct pending_io {
	block_io *io = nullptr;
	int lun = 0;
	bool operator==(const block_io *p) const { return io == p; }
};

class fuzz_owner final : public command_owner {
public:
	std::vector<slot> *slots = nullptr;
	std::vector<size_t> wake_list;

	size_t index_of(const command &cmd) const
	{
		for (size_t i = 0; i < slots->size(); i++)
			if (&(*slots)[i].cmd == &cmd)
				return i;
		fuzz::fail(__FILE__, __LINE__, "index_of", "callback for an unknown command");
	}

	void command_done(command &cmd) override;
	void command_wake(command &cmd) override
	{
		size_t i = index_of(cmd);
		FUZZ_CHECK((*slots)[i].busy, "wake-up for a command that is not running");
		FUZZ_CHECK(!(*slots)[i].woken, "two wake-ups without a resume");
		(*slots)[i].woken = true;
		wake_list.push_back(i);
	}
	std::vector<pending_io> *queue = nullptr;
	logical_unit *other_lu = nullptr;
};

class deferred_store final : public backstore_queue {
public:
	std::vector<pending_io> queue;
	std::vector<uint8_t> medium[2];
	std::vector<slot> *slots = nullptr;
	logical_unit *lu[2] = {};

	size_t slot_of(const block_io &io) const
	{
		for (size_t i = 0; i < slots->size(); i++)
			if (&(*slots)[i].cmd.io() == &io)
				return i;
		fuzz::fail(__FILE__, __LINE__, "slot_of", "a request from no command slot");
	}

	void submit(block_io &io) override { submit_to(io, 0); }

	void submit_to(block_io &io, int lun)
	{
		size_t i = slot_of(io);
		slot &s = (*slots)[i];
		FUZZ_CHECK(s.busy, "a request from a command that is not running");
		FUZZ_CHECK(std::find(queue.begin(), queue.end(), &io) == queue.end(),
			   "a request resubmitted while still at the backstore");
		FUZZ_CHECK(io.done != nullptr,
			   "no completion target");
		FUZZ_CHECK(lun == 0 || s.cmd.cdb()[0] == EXTENDED_COPY,
			   "a request to the other LUN from a command other than EXTENDED COPY");
		s.lock_lun = lun;
		uint64_t cap = medium[lun].size();
		FUZZ_CHECK(io.op == block_op::flush ||
				   (io.offset <= cap && io.length <= cap - io.offset),
			   "a request beyond the capacity");
		if (io.op == block_op::read || io.op == block_op::write) {
			uint64_t total = 0;
			for (const iovec &v : io.iov)
				total += v.iov_len;
			FUZZ_CHECK(total == io.length, "iovecs do not add up to the length");
			FUZZ_CHECK(io.length > 0, "an empty read or write");
		}
		check_lock(s, io, lun);
		if (lun == 0)
			check_read_modify_write(s, io);
		// The command's own bounce buffer (WRITE SAME pattern, COMPARE
		// AND WRITE and VERIFY reads) may meet an O_DIRECT backstore:
		// it must be aligned as a 512-byte logical block device asks.
		auto &bounce = s.cmd.bounce();
		for (const iovec &v : io.iov) {
			auto *p = static_cast<const uint8_t *>(v.iov_base);
			if (bounce.empty() || p < bounce.data() || p >= bounce.data() + bounce.size())
				continue;
			// Only block offsets into the buffer must be aligned: a
			// request may start inside it at any block.
			if ((p - bounce.data()) % 512 != 0)
				continue;
			FUZZ_CHECK_KNOWN("F5", reinterpret_cast<uintptr_t>(p) % 512 == 0,
					 "a bounce buffer not aligned for O_DIRECT");
		}
		queue.push_back({&io, lun});
	}

	static bool changes_medium(block_op op)
	{
		return op == block_op::write || op == block_op::discard ||
		       op == block_op::write_zeroes;
	}

	// The atomicity COMPARE AND WRITE and ORWRITE promise, checked on
	// what reaches LUN 0's backstore, whatever the range lock says.
	void check_read_modify_write(slot &s, const block_io &io)
	{
		const uint64_t first = io.offset, end = io.offset + io.length;
		const uint8_t op = s.cmd.cdb()[0];
		if (io.op == block_op::read && (op == COMPARE_AND_WRITE || op == ORWRITE_16)) {
			for (const pending_io &p : queue) {
				if (p.lun != 0 || !changes_medium(p.io->op) || &s.cmd.io() == p.io)
					continue;
				bool overlap = p.io->offset < end && first < p.io->offset + p.io->length;
				FUZZ_CHECK(!overlap, "a COMPARE AND WRITE/ORWRITE read blocks another "
						     "command's change to them was still writing");
			}
			s.rmw_first = s.rmw_open ? std::min(s.rmw_first, first) : first;
			s.rmw_end = s.rmw_open ? std::max(s.rmw_end, end) : end;
			s.rmw_open = true;
		}
		if (!changes_medium(io.op))
			return;
		for (const slot &o : *slots) {
			if (&o == &s || !o.busy || !o.rmw_open)
				continue;
			bool overlap = o.rmw_first < end && first < o.rmw_end;
			FUZZ_CHECK(!overlap, "a change to blocks a COMPARE AND WRITE/ORWRITE has "
					     "read and not yet written back");
		}
	}

	void check_lock(slot &s, const block_io &io, int lun)
	{
		const range_lock::entry &r = s.cmd.range();
		bool holds = r.current == range_lock::entry::state::fast ||
			     r.current == range_lock::entry::state::held;
		bool modifies = io.op == block_op::write || io.op == block_op::discard ||
				io.op == block_op::write_zeroes;
		if (io.op == block_op::flush)
			return;
		if (modifies)
			FUZZ_CHECK(holds, "a change to the medium without the range lock");
		if (!holds)
			return;
		uint64_t bs = lu[lun]->block_size();
		bool inside = io.offset >= r.first * bs && io.offset + io.length <= r.end * bs;
		if (!inside && s.rewritten && io.op == block_op::discard)
			FUZZ_CHECK_KNOWN("F4", inside,
					 "UNMAP discards outside its locked range after its Data-Out changed");
		else
			FUZZ_CHECK(inside, "a request outside its command's locked range");
		// Nobody else may hold an overlapping range while either side is
		// exclusive.
		for (slot &o : *slots) {
			if (&o == &s || !o.busy || o.lock_lun != lun)
				continue;
			const range_lock::entry &e = o.cmd.range();
			bool o_holds = e.current == range_lock::entry::state::fast ||
				       e.current == range_lock::entry::state::held;
			if (!o_holds || !(r.exclusive || e.exclusive))
				continue;
			bool overlap = e.first < r.end && r.first < e.end;
			FUZZ_CHECK(!overlap, "two commands hold overlapping ranges, one exclusive");
		}
	}

	// Carries out request q with the outcome the script chose.
	void complete(size_t q, uint8_t how, input &in)
	{
		block_io *io = queue[q].io;
		int lun = queue[q].lun;
		queue.erase(queue.begin() + ptrdiff_t(q));
		slot &s = (*slots)[slot_of(*io)];
		int64_t result = 0;
		uint64_t moved = io->length;
		switch (how % 8) {
		case 0:
		case 1: result = int64_t(io->length); break;
		case 2: result = 0; break; // success without a count
		case 3:
			if ((io->op == block_op::read || io->op == block_op::write) && io->length > 1) {
				moved = in.range(1, io->length - 1);
				result = int64_t(moved);
			} else {
				result = int64_t(io->length);
			}
			break;
		case 4: result = -EIO; break;
		case 5: result = -ENOSPC; break;
		case 6: result = -EAGAIN; break;
		case 7: result = -ECANCELED; break;
		}
		if (result >= 0) {
			if (lun == 0) {
				perform(*io, moved, 0, s.unsynced, s.unsynced_by_fallocate);
			} else {
				bool by_fallocate = false;
				perform(*io, moved, 1, s.other_unsynced, by_fallocate);
			}
		}
		io->done->io_done(result);
	}

	void perform(const block_io &io, uint64_t moved, int lun, bool &unsynced,
		     bool &unsynced_by_fallocate)
	{
		uint8_t *m = medium[lun].data() + io.offset;
		switch (io.op) {
		case block_op::read:
		case block_op::write: {
			uint64_t done = 0;
			for (const iovec &v : io.iov) {
				uint64_t n = std::min<uint64_t>(v.iov_len, moved - done);
				if (io.op == block_op::read)
					std::memcpy(v.iov_base, m + done, n);
				else
					std::memcpy(m + done, v.iov_base, n);
				done += n;
			}
			if (io.op == block_op::write && !io.fua)
				unsynced = true;
			break;
		}
		case block_op::discard:
		case block_op::write_zeroes:
			std::memset(m, 0, io.length);
			// FUA: the backstore syncs before completing (F1's fix).
			if (!io.fua) {
				unsynced = true;
				unsynced_by_fallocate = true;
			}
			break;
		case block_op::prefetch:
		case block_op::compare_and_write:  // not offered in caps
			break;
		case block_op::flush:
			unsynced = false;
			unsynced_by_fallocate = false;
			break;
		}
	}
};

void fuzz_owner::command_done(command &cmd)
{
	size_t i = index_of(cmd);
	slot &s = (*slots)[i];
	FUZZ_CHECK(s.busy, "command_done for a command that is not running");
	s.done_calls++;
	FUZZ_CHECK(s.done_calls == 1, "command_done called twice");
	FUZZ_CHECK(std::find(queue->begin(), queue->end(), &cmd.io()) == queue->end(),
		   "command_done while its request is still at the backstore");
	FUZZ_CHECK(cmd.range().current == range_lock::entry::state::idle,
		   "command_done with the range lock still held or waited for");
	FUZZ_CHECK(!s.woken, "command_done with a wake-up still pending");
	uint8_t st = cmd.status();
	auto sense = cmd.sense();
	if (st == SAM_STAT_CHECK_CONDITION) {
		FUZZ_CHECK(sense.size() >= 8, "CHECK CONDITION without sense");
		FUZZ_CHECK((sense[0] & 0x7f) == 0x70 || (sense[0] & 0x7f) == 0x72,
			   "sense in neither fixed nor descriptor format");
		uint8_t key = (sense[0] & 0x7f) == 0x70 ? sense[2] & 0xf : sense[1] & 0xf;
		// D_SENSE as it was when the command began, even if a MODE
		// SELECT changed it meanwhile.
		FUZZ_CHECK((sense[0] & 0x7f) == (s.d_sense_at_start ? 0x72 : 0x70),
			   "sense format differs from D_SENSE at the command's start");
		FUZZ_CHECK(key != 0, "CHECK CONDITION with NO SENSE");
	} else {
		FUZZ_CHECK(sense.empty(), "sense data without CHECK CONDITION");
		// CONDITION MET: PRE-FETCH's GOOD when the cache can hold it.
		bool prefetch = cmd.cdb()[0] == PRE_FETCH_10 || cmd.cdb()[0] == PRE_FETCH_16;
		FUZZ_CHECK(st == SAM_STAT_GOOD || st == SAM_STAT_BUSY ||
				   st == SAM_STAT_TASK_SET_FULL || (prefetch && st == 0x04),
			   "unexpected status " + std::to_string(st));
	}
	FUZZ_CHECK(cmd.read_len() <= s.buffer.size(), "read_len beyond the buffer");
	if (st == SAM_STAT_GOOD && s.wce_off_at_start && !cmd.lu().write_cache_enabled() &&
	    s.unsynced) {
		if (s.unsynced_by_fallocate)
			FUZZ_CHECK_KNOWN("F1", !s.unsynced,
					 "GOOD with WCE=0 after a discard/write-zeroes never synced");
		else
			FUZZ_CHECK(!s.unsynced, "GOOD with WCE=0 after a write without FUA or flush");
	}
	if (st == SAM_STAT_GOOD && s.other_wce_off_at_start && !other_lu->write_cache_enabled())
		FUZZ_CHECK(!s.other_unsynced,
			   "GOOD with the other LUN's WCE=0 after a copy write to it without FUA");
	s.rmw_open = false;
	s.busy = false;
}

// Opcodes worth aiming at; anything else comes raw from the input.
constexpr uint8_t interesting[] = {
	TEST_UNIT_READY, REQUEST_SENSE, READ_6, WRITE_6, INQUIRY, MODE_SELECT_6, MODE_SENSE_6,
	START_STOP_UNIT, READ_CAPACITY_10, READ_10, WRITE_10, WRITE_VERIFY_10, VERIFY_10,
	SYNCHRONIZE_CACHE_10, WRITE_SAME_10, UNMAP, MODE_SELECT_10, MODE_SENSE_10, READ_16,
	COMPARE_AND_WRITE, WRITE_16, WRITE_VERIFY_16, VERIFY_16, SYNCHRONIZE_CACHE_16,
	WRITE_SAME_16, SERVICE_ACTION_IN_16, MAINTENANCE_IN, READ_12, WRITE_12,
	PRE_FETCH_10, PRE_FETCH_16, WRITE_ATOMIC_16, EXTENDED_COPY, RECEIVE_COPY_RESULTS,
};

void put_be(std::vector<uint8_t> &cdb, size_t at, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (at + n - 1 - i < cdb.size())
			cdb[at + n - 1 - i] = uint8_t(v >> (8 * i));
}

// The other LUN as the copy-target registry hands it out: a queue of its
// own onto its medium in the deferred store (or none: unreachable).
class other_queue final : public backstore_queue {
public:
	explicit other_queue(deferred_store &store) : store_(store) {}
	void submit(block_io &io) override { store_.submit_to(io, 1); }

private:
	deferred_store &store_;
};

class lun_target final : public copy_target {
public:
	// joined: whether the copy policy lets the first LUN reach this one.
	lun_target(logical_unit &lu, deferred_store *store, bool joined)
		: lu_(lu), store_(store), joined_(joined)
	{
	}
	logical_unit &lu() override { return lu_; }
	std::unique_ptr<backstore_queue> open_queue(backstore_queue &) override
	{
		FUZZ_CHECK(joined_, "EXTENDED COPY reached a LUN no copy group joins");
		if (!store_)
			return nullptr;
		return std::make_unique<other_queue>(*store_);
	}

private:
	logical_unit &lu_;
	deferred_store *store_;
	bool joined_;
};

class driver {
public:
	explicit driver(input &in) : in_(in), slots_(max_commands)
	{
		logical_unit_config cfg;
		cfg.block_size = 512u << in.range(0, 3);
		cfg.num_blocks = in.range(1, 64);
		uint8_t caps = in.u8();
		cfg.caps.discard = caps & 1;
		cfg.caps.prefetch = caps & 2;
		cfg.caps.discard_zeroes = cfg.caps.discard && in.flag();
		cfg.caps.write_zeroes = in.flag();
		cfg.write_cache_enabled = in.flag();
		cfg.max_compare_and_write_blocks = uint8_t(in.range(1, 4));
		cfg.max_transfer_blocks = uint32_t(in.range(0, 32));
		cfg.max_write_same_blocks = in.range(0, 32);
		cfg.max_unmap_blocks = uint32_t(in.range(0, 64));
		cfg.max_unmap_descriptors = uint32_t(in.range(0, 8));
		cfg.unit_serial = [] { return std::string("fuzz-serial"); };
		cfg.copy_targets = &targets_;
		cfg.copy_self = {0, "first"};
		auto created = logical_unit::create(cfg);
		FUZZ_CHECK(created.ok(), "create failed: " + (created.ok() ? "" : created.error().message));
		lu_ = std::move(*created);
		// Block b holds b + 1 (memset per block: a byte loop here
		// was most of an execution, see fuzz::fill_ramp).
		store_.medium[0].resize(cfg.num_blocks * cfg.block_size);
		for (size_t b = 0; b < cfg.num_blocks; b++)
			std::memset(store_.medium[0].data() + b * cfg.block_size, int(uint8_t(b + 1)),
				    cfg.block_size);
		store_.slots = &slots_;
		store_.lu[0] = lu_.get();
		owner_.slots = &slots_;
		owner_.queue = &store_.queue;
		auto naa = naa_from_serial(lu_->unit_serial());
		FUZZ_CHECK(naa.has_value(), "no NAA from the serial");
		naa_ = naa.value_or(naa_id{});
		make_other_lun(cfg);
	}

	// EXTENDED COPY's other device: its own size, usually the same block
	// size (a copy between block sizes is refused), its own WCE.
	void make_other_lun(const logical_unit_config &first)
	{
		logical_unit_config cfg;
		cfg.block_size = in_.flag() ? 512u << in_.range(0, 3) : first.block_size;
		cfg.num_blocks = in_.range(1, 64);
		cfg.write_cache_enabled = in_.flag();
		cfg.unit_serial = [] { return std::string("fuzz-serial-2"); };
		auto created = logical_unit::create(cfg);
		FUZZ_CHECK(created.ok(), "create failed: " + (created.ok() ? "" : created.error().message));
		other_ = std::move(*created);
		auto &m = store_.medium[1];
		m.resize(cfg.num_blocks * cfg.block_size);
		for (size_t b = 0; b < cfg.num_blocks; b++)
			std::memset(m.data() + b * cfg.block_size, int(uint8_t(0x80 + b)), cfg.block_size);
		store_.lu[1] = other_.get();
		owner_.other_lu = other_.get();
		auto other_naa = naa_from_serial(other_->unit_serial());
		FUZZ_CHECK(other_naa.has_value(), "no NAA from the other serial");
		other_naa_ = other_naa.value_or(naa_id{});
		FUZZ_CHECK(other_naa_ != naa_, "both LUNs have one NAA");
		uint8_t reach = in_.u8();
		bool reachable = reach % 8 != 0;
		bool joined = reach % 5 != 0;
		other_target_ = std::make_shared<lun_target>(*other_, reachable ? &store_ : nullptr,
							     joined);
		targets_.add(other_naa_, {1, "other"}, other_target_);
		// This LUN is listed too, as the daemon lists every device.
		self_target_ = std::make_shared<lun_target>(*lu_, nullptr, true);
		targets_.add(naa_, {0, "first"}, self_target_);
		if (joined)
			targets_.set_policy([](const copy_member &, const copy_member &) { return true; });
	}

	void run()
	{
		while (!in_.empty()) {
			switch (in_.u8() % 8) {
			case 0:
			case 1: start(); break;
			case 2:
			case 3:
			case 4: complete(); break;
			case 5: resume(); break;
			case 6: rewrite(); break;
			case 7: flip_wce(); break;
			}
		}
		drain();
	}

private:
	// INQUIRY, MODE SENSE and MODE SELECT fields that random bytes seldom
	// get right: a page that exists, PF, a parameter list (list_, put in
	// the buffer by make_buffer) whose length the CDB gives.
	void aim_mode_and_inquiry(std::vector<uint8_t> &cdb)
	{
		static const uint8_t vpd[] = {0x00, 0x80, 0x83, 0x8f, 0xb0, 0xb1, 0xb2};
		static const uint8_t mode_pages[] = {0x08, 0x0a, 0x3f};
		switch (cdb[0]) {
		case INQUIRY:
			put_be(cdb, 1, 1, in_.u8() & 1);  // EVPD
			put_be(cdb, 2, 1, vpd[in_.range(0, std::size(vpd) - 1)]);
			put_be(cdb, 3, 2, in_.range(0, 600));
			break;
		case MODE_SENSE_6:
		case MODE_SENSE_10:
			put_be(cdb, 1, 1, in_.u8() & 0x18);  // DBD, LLBAA
			put_be(cdb, 2, 1, in_.range(0, 3) << 6 | mode_pages[in_.range(0, 2)]);
			put_be(cdb, 3, 1, 0);
			if (cdb[0] == MODE_SENSE_6)
				put_be(cdb, 4, 1, in_.u8());
			else
				put_be(cdb, 7, 2, in_.range(0, 255));
			break;
		case MODE_SELECT_6:
		case MODE_SELECT_10:
			make_mode_list(cdb[0] == MODE_SELECT_10);
			put_be(cdb, 1, 1, 0x10);  // PF
			if (cdb[0] == MODE_SELECT_6)
				put_be(cdb, 4, 1, list_.size());
			else
				put_be(cdb, 7, 2, list_.size());
			break;
		}
	}

	// Header, maybe a block descriptor restating the geometry, then the
	// caching page (WCE), the control page (D_SENSE) or both.
	void make_mode_list(bool ten)
	{
		size_t header = ten ? 8 : 4;
		list_.assign(header, 0);
		if (in_.flag()) {
			put_be(list_, ten ? 6 : 3, ten ? 2 : 1, 8);
			list_.resize(header + 8, 0);
			put_be(list_, header, 4, in_.flag() ? 0 : lu_->num_blocks());
			put_be(list_, header + 5, 3, lu_->block_size());
		}
		uint64_t pages = in_.range(1, 3);
		if (pages & 1)
			append_mode_page(0x08, 0x12);  // byte 2 bit 2: WCE
		if (pages & 2) {
			size_t at = append_mode_page(0x0a, 0x0a);  // byte 2 bit 2: D_SENSE
			list_[at + 3] = 0x10;  // QUEUE ALGORITHM MODIFIER as it is
		}
	}

	// A mode page of `length` bytes after its two-byte header, all zero but
	// for bit 2 of byte 2 (WCE on the caching page, D_SENSE on the control
	// page), set or clear as the input says. Returns where it starts.
	size_t append_mode_page(uint8_t code, uint8_t length)
	{
		size_t at = list_.size();
		list_.resize(at + 2 + length, 0);
		list_[at] = code;
		list_[at + 1] = length;
		list_[at + 2] = in_.flag() ? 0x04 : 0;
		return at;
	}

	std::vector<uint8_t> make_cdb()
	{
		list_.clear();
		uint8_t pick = in_.u8();
		uint8_t op = pick < 2 * std::size(interesting) ? interesting[pick % std::size(interesting)]
							       : in_.u8();
		static const size_t group_length[8] = {6, 10, 10, 12, 16, 12, 10, 10};
		std::vector<uint8_t> cdb(in_.flag() ? group_length[op >> 5] : in_.range(1, 32));
		cdb[0] = op;
		auto raw = in_.bytes(std::min<size_t>(cdb.size() - 1, in_.range(0, cdb.size() - 1)));
		std::copy(raw.begin(), raw.end(), cdb.begin() + 1);
		if (in_.flag()) {
			// Aim LBA and length at the medium.
			uint64_t lba = in_.range(0, lu_->num_blocks());
			uint64_t len = in_.range(0, 8);
			switch (op >> 5) {
			case 0: put_be(cdb, 1, 3, lba); put_be(cdb, 4, 1, len); break;
			case 1:
			case 2: put_be(cdb, 2, 4, lba); put_be(cdb, 7, 2, len); break;
			case 5: put_be(cdb, 2, 4, lba); put_be(cdb, 6, 4, len); break;
			case 4: put_be(cdb, 2, 8, lba); put_be(cdb, 10, 4, len); break;
			}
			if (op == COMPARE_AND_WRITE)
				put_be(cdb, 13, 1, len);
			if (op == UNMAP)
				put_be(cdb, 7, 2, 8 + 16 * len);
			aim_mode_and_inquiry(cdb);
			if (op == EXTENDED_COPY) {
				// Bytes 1-9 are reserved; 10-13 the list length.
				xcopy_cscds_ = in_.range(1, 2);
				std::fill_n(cdb.begin() + 1, std::min<size_t>(9, cdb.size() - 1), 0);
				put_be(cdb, 10, 4, xcopy_list_length(len));
			}
		}
		return cdb;
	}

	void make_buffer(slot &s, uint8_t op)
	{
		size_t bs = lu_->block_size();
		size_t len = in_.flag() ? in_.range(0, 8) * bs : in_.range(0, 8 * bs);
		s.buffer.assign(len, 0);
		s.data_out = in_.flag();
		if (s.data_out) {
			uint8_t seed = in_.u8();
			for (size_t at = 0; at < len; at += bs)
				std::memset(s.buffer.data() + at, int(uint8_t(seed + at / bs)),
					    std::min(bs, len - at));
			if (op == UNMAP && len >= 8) {
				// A parameter list: header, then descriptors
				// aimed at the medium.
				size_t n = std::min<size_t>((len - 8) / 16, in_.range(0, 4));
				std::vector<uint8_t> list(8 + 16 * n, 0);
				put_be(list, 0, 2, list.size() - 2);
				put_be(list, 2, 2, 16 * n);
				for (size_t d = 0; d < n; d++) {
					put_be(list, 8 + 16 * d, 8, in_.range(0, lu_->num_blocks()));
					put_be(list, 16 + 16 * d, 4, in_.range(0, 8));
				}
				std::copy(list.begin(), list.end(), s.buffer.begin());
			}
			if (op == EXTENDED_COPY && len >= xcopy_list_length(0))
				make_xcopy_list(s.buffer);
			if (!list_.empty() && len >= list_.size())
				std::copy(list_.begin(), list_.end(), s.buffer.begin());
			auto raw = in_.bytes(std::min<size_t>(len, in_.range(0, 24)));
			size_t at = len ? in_.range(0, len - 1) : 0;
			for (size_t i = 0; i < raw.size() && at + i < len; i++)
				s.buffer[at + i] = raw[i];
		}
		// Tiny pieces only at the front: 64 of them cross every
		// boundary case the data walks have, and the 512-byte pieces
		// after them start off a block boundary. A whole buffer in
		// 1-byte iovecs (32 Ki of them) made building and walking
		// the list most of an execution's cost.
		size_t piece = std::array<size_t, 4>{0, 1, 7, 512}[in_.range(0, 3)];
		s.iovs.clear();
		for (size_t at = 0; at < len;) {
			size_t size = piece < 512 && s.iovs.size() >= 64 ? 512 : piece;
			size_t n = size ? std::min(size, len - at) : len - at;
			s.iovs.push_back({s.buffer.data() + at, n});
			at += n;
		}
	}

	// EXTENDED COPY: header, one CSCD naming this LU (its NAA from the
	// serial) and maybe one naming the other, then n block-to-block
	// segments between them.
	size_t xcopy_list_length(size_t n) const { return 16 + 32 * xcopy_cscds_ + 28 * n; }

	// A parameter list aimed at the medium, in the front of `buffer`
	// (which holds at least one with no segment).
	void make_xcopy_list(std::vector<uint8_t> &buffer)
	{
		size_t n = std::min<size_t>((buffer.size() - xcopy_list_length(0)) / 28,
					    in_.range(0, 4));
		std::vector<uint8_t> list(xcopy_list_length(n), 0);
		list[0] = in_.u8();                 // LIST IDENTIFIER
		list[1] = in_.flag() ? 0x10 : 0x00; // LIST ID USAGE: discard or hold
		put_be(list, 2, 2, 32 * xcopy_cscds_);
		put_be(list, 8, 4, 28 * n);
		const logical_unit *lus[2] = {lu_.get(), other_.get()};
		const naa_id *naas[2] = {&naa_, &other_naa_};
		bool swap = in_.flag(); // which LUN the first CSCD names
		for (size_t c = 0; c < xcopy_cscds_; c++) {
			size_t at = 16 + 32 * c, which = (c + swap) % 2;
			list[at] = 0xe4;            // identification CSCD
			list[at + 4] = 0x01;        // binary
			list[at + 5] = 0x03;        // LU, NAA
			list[at + 7] = 16;
			std::copy(naas[which]->begin(), naas[which]->end(), list.begin() + ptrdiff_t(at + 8));
			put_be(list, at + 29, 3, lus[which]->block_size());
		}
		for (size_t d = 0; d < n; d++) {
			size_t at = xcopy_list_length(d);
			size_t src = in_.range(0, xcopy_cscds_ - 1), dst = in_.range(0, xcopy_cscds_ - 1);
			list[at] = 0x02;            // block to block
			put_be(list, at + 2, 2, 24);
			put_be(list, at + 4, 2, src);
			put_be(list, at + 6, 2, dst);
			put_be(list, at + 10, 2, in_.range(0, 8));
			put_be(list, at + 12, 8, in_.range(0, lus[(src + swap) % 2]->num_blocks()));
			put_be(list, at + 20, 8, in_.range(0, lus[(dst + swap) % 2]->num_blocks()));
		}
		std::copy(list.begin(), list.end(), buffer.begin());
	}

	void start()
	{
		size_t i = in_.range(0, max_commands - 1);
		slot &s = slots_[i];
		if (s.busy)
			return;
		std::vector<uint8_t> cdb = make_cdb();
		make_buffer(s, cdb[0]);
		s.busy = true;
		s.done_calls = 0;
		s.rewritten = s.unsynced = s.unsynced_by_fallocate = s.woken = false;
		s.rmw_open = false;
		s.wce_off_at_start = !lu_->write_cache_enabled();
		s.other_wce_off_at_start = !other_->write_cache_enabled();
		s.other_unsynced = false;
		s.lock_lun = 0;
		s.d_sense_at_start = lu_->descriptor_sense();
		s.cmd.reset(cdb, s.iovs, &owner_);
		lu_->execute(s.cmd, store_);
	}

	void complete()
	{
		if (store_.queue.empty())
			return;
		size_t q = in_.range(0, store_.queue.size() - 1);
		store_.complete(q, in_.u8(), in_);
	}

	void resume()
	{
		if (owner_.wake_list.empty())
			return;
		size_t k = in_.range(0, owner_.wake_list.size() - 1);
		size_t i = owner_.wake_list[k];
		owner_.wake_list.erase(owner_.wake_list.begin() + ptrdiff_t(k));
		slots_[i].woken = false;
		lu_->resume(slots_[i].cmd, store_);
	}

	void rewrite()
	{
		slot &s = slots_[in_.range(0, max_commands - 1)];
		if (!s.busy || !s.data_out || s.buffer.empty())
			return;
		size_t at = in_.range(0, s.buffer.size() - 1);
		s.buffer[at] = in_.u8();
		s.rewritten = true;
	}

	// As a MODE SELECT from another initiator would: WCE, and sometimes
	// D_SENSE too.
	void flip_wce()
	{
		uint8_t v = in_.u8();
		lu_->set_write_cache_enabled(v & 1);
		if (v & 2)
			lu_->set_descriptor_sense(v & 4);
		if (v & 8)
			other_->set_write_cache_enabled(v & 16);
	}

	void drain()
	{
		for (int round = 0; round < 100000; round++) {
			if (!store_.queue.empty()) {
				input ok(nullptr, 0); // all zeroes: full success
				store_.complete(0, 0, ok);
				continue;
			}
			if (!owner_.wake_list.empty()) {
				size_t i = owner_.wake_list.front();
				owner_.wake_list.erase(owner_.wake_list.begin());
				slots_[i].woken = false;
				lu_->resume(slots_[i].cmd, store_);
				continue;
			}
			break;
		}
		for (const slot &s : slots_)
			FUZZ_CHECK(!s.busy, "a command never finished (lost wake-up or deadlock)");
	}

	input &in_;
	std::vector<slot> slots_;
	copy_target_registry targets_; // before the LUNs that point to it
	std::unique_ptr<logical_unit> lu_;
	std::unique_ptr<logical_unit> other_;
	deferred_store store_;
	fuzz_owner owner_;
	naa_id naa_{};
	naa_id other_naa_{};
	std::shared_ptr<lun_target> other_target_, self_target_;
	size_t xcopy_cscds_ = 1; // CSCDs in the next EXTENDED COPY list
	std::vector<uint8_t> list_;  // a MODE SELECT list for make_buffer
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input in(data, size);
	driver d(in);
	d.run();
	return 0;
}
