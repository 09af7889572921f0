// SPDX-License-Identifier: GPL-2.0-or-later
// The backstore contract (include/tcmud/backstore.h) of the file
// handler's queue, over a recording io_engine that never touches a file:
// it hands out SQEs (or refuses them: a full submission queue), and the
// script completes them in any order with the real outcome, a short count,
// 0, -EAGAIN, -EIO or -ECANCELED, carrying out reads, writes, flushes and
// fallocates on an in-memory medium.
//
// Oracles:
//   - io_done exactly once per submitted request, never from inside
//     submit(), and only after every SQE of the request has completed;
//   - success is the whole length for a read/write (0 for the rest), and
//     then every byte moved: the medium holds what was written, the buffer
//     what was read (when no overlapping change ran alongside);
//   - an error the engine reported comes back unchanged; a transfer that
//     moves nothing is -EIO; a request outside the served size is -EINVAL,
//     a discard/write-zeroes the caps do not offer -EOPNOTSUPP, and neither
//     touches the medium;
//   - every SQE stays inside its request: file range, buffers inside the
//     caller's iovecs and carrying the bytes of the file range it names,
//     the backing fd (or its fixed-file index); every write SQE of a FUA
//     request carries RWF_DSYNC;
//   - a FUA discard/write-zeroes succeeds only once an fdatasync issued
//     after its fallocate completed has succeeded (fallocate has no
//     RWF_DSYNC: with the write cache off, GOOD must not come before the
//     deallocation is durable);
//   - fixed buffers (the engine's registered area, as a queue's TCMU data
//     area would be): a READ_FIXED/WRITE_FIXED lies wholly inside the one
//     1 GiB buffer its buf_index names, and a request whose data is one
//     contiguous range inside the area is carried by fixed ops only. The
//     area may be absent, cover the request buffers' arena exactly, end
//     inside it, or put a 1 GiB buffer boundary inside it; a request's
//     buffer lies in the arena or on the heap, its iovecs adjacent or with
//     gaps between them (which must fall back to the plain ops);
//   - nothing is lost: with the engine drained and its SQE waiters run,
//     every request has completed.
// allocation() (GET LBA STATUS), on a real sparse file of its own (a memfd:
// tmpfs has SEEK_DATA/SEEK_HOLE) that the script writes and punches pages
// of: 0, a run of 1 to `length` bytes, never unmapped over a page holding
// data, mapped where the first byte's page holds data and then at least up
// to the end of that data (a file system may call holes data, not the
// reverse).
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bitset>
#include <cstring>
#include <memory>
#include <vector>

#include "file/file_queue.h"
#include "fuzz_support.h"
#include "log/log.h"
#include "tcmud/io_engine.h"

using namespace tcmud;
using tcmud::fuzz::input;

namespace {

constexpr int backing_fd = 1000; // never used as an fd: the engine is fake
constexpr size_t max_requests = 6;
constexpr uint64_t medium_max = 64 * 1024;
constexpr uint64_t request_max = 16 * 1024;

// Request buffers that the engine may call registered: one slot per
// request, room for request_max bytes in up to ~2,100 tiny pieces with a
// gap of up to 8 bytes after each.
constexpr size_t arena_slot = 40 * 1024;
alignas(4096) uint8_t arena[max_requests * arena_slot];

struct recorded_sqe {
	io_completion *done = nullptr;
	uint64_t issued = 0; // the engine's clock when the queue took the SQE
	// On the heap: gcc -Wpedantic refuses io_uring_sqe as a member (it
	// ends in a zero-size array, cmd[]).
	std::unique_ptr<io_uring_sqe> owned = std::make_unique<io_uring_sqe>();
	io_uring_sqe &sqe = *owned;
};

class recording_engine final : public io_engine {
public:
	int file = backing_fd;
	bool full = false;
	bool fixed = false;
	fixed_buffer_area area;
	std::vector<std::unique_ptr<recorded_sqe>> in_flight;
	std::vector<io_completion *> waiters;
	// Ticks at every SQE handed out and every change to the medium that
	// completes: orders fdatasyncs against the changes they cover.
	uint64_t clock = 0;

	io_uring_sqe *get_sqe(io_completion *done) override
	{
		if (full)
			return nullptr;
		auto r = std::make_unique<recorded_sqe>();
		r->issued = ++clock;
		std::memset(&r->sqe, 0, sizeof(r->sqe));
		io_uring_sqe_set_data(&r->sqe, done);
		r->done = done;
		in_flight.push_back(std::move(r));
		return &in_flight.back()->sqe;
	}
	// Garbage but for user_data: a field the queue leaves unset shows as
	// 0xa5 bytes to the oracle below (or to the kernel, in unit tests).
	io_uring_sqe *get_sqe_uncleared_slow(io_completion *done) override
	{
		io_uring_sqe *sqe = get_sqe(done);
		if (sqe) {
			std::memset(static_cast<void *>(sqe), 0xa5, sizeof(*sqe));
			io_uring_sqe_set_data(sqe, done);
		}
		return sqe;
	}
	void wait_for_sqe(io_completion *waiter) override
	{
		FUZZ_CHECK(std::find(waiters.begin(), waiters.end(), waiter) == waiters.end(),
			   "wait_for_sqe twice before the wake-up");
		waiters.push_back(waiter);
	}
	setup_result<int> register_file(int fd) override
	{
		FUZZ_CHECK(fd == file, "registered a file other than the backing one");
		if (!fixed)
			return setup_error{EOPNOTSUPP, "no fixed files in this run"};
		return 7;
	}
	void unregister_file(int index) override
	{
		FUZZ_CHECK(fixed && index == 7, "unregistered a file never registered");
	}
	fixed_buffer_area fixed_buffers() const override { return area; }
};

bool is_read_op(uint8_t op)
{
	return op == IORING_OP_READ || op == IORING_OP_READV || op == IORING_OP_READ_FIXED;
}
bool is_write_op(uint8_t op)
{
	return op == IORING_OP_WRITE || op == IORING_OP_WRITEV || op == IORING_OP_WRITE_FIXED;
}

struct request {
	block_io io;
	struct done_t final : io_completion {
		request *self = nullptr;
		void io_done(int64_t result) override;
	} done;
	bool busy = false;
	int calls = 0;
	std::span<uint8_t> buffer;   // in `heap` or in its arena slot
	std::vector<uint8_t> heap;
	std::vector<iovec> iovs;
	std::vector<uint64_t> iov_start; // request offset of each iovec, for data_cursor
	bool must_be_fixed = false;  // contiguous, inside the registered area
	bool racy = false;           // an overlapping change ran alongside
	bool expect_invalid = false; // -EINVAL / -EOPNOTSUPP expected
	int64_t injected = 0;        // an error the engine reported for it
	bool saw_zero = false;       // an SQE of it moved 0 bytes
	uint64_t size_at_submit = 0;
	uint64_t changed_at = 0;     // the engine's clock when its fallocate completed
};

class driver;
driver *current = nullptr;

class driver {
public:
	explicit driver(input &in) : in_(in), reqs_(max_requests)
	{
		current = this;
		// Bits 0-1 the caps, 2-3 the fixed-buffer layout, 4-7 where in
		// the arena that layout puts an edge.
		uint8_t caps = in.u8();
		caps_.discard = caps & 1;
		caps_.prefetch = caps & 2;
		engine_.area = registered_area(caps >> 2 & 3, caps >> 4);
		caps_.write_zeroes = in.flag();
		engine_.fixed = in.flag();
		size_.store(in.range(0, medium_max));
		static const std::vector<uint8_t> pattern = [] {
			std::vector<uint8_t> m(medium_max);
			for (size_t i = 0; i < m.size(); i++)
				m[i] = uint8_t(i * 7 + 3);
			return m;
		}();
		// A copy into storage kept across runs: a byte loop, or a
		// fresh 64 KiB allocation (page faults), per run was most of
		// its time.
		static std::vector<uint8_t> medium;
		medium = pattern;
		medium_ = medium;
		for (auto &r : reqs_)
			r.done.self = &r;
		queue_ = std::make_unique<file_queue>(engine_, backing_fd, size_, caps_, "fuzz:");
		queue_->set_async_threshold(in.range(0, 3) * 4096);
		queue_->set_result_filter(&driver::filter, this);
	}
	~driver() { current = nullptr; }

	static fixed_buffer_area registered_area(unsigned layout, unsigned edge_at)
	{
		const auto base = reinterpret_cast<uintptr_t>(arena);
		const size_t whole = sizeof(arena);
		const size_t edge = (edge_at + 1) * (whole / 17);
		constexpr size_t gib = size_t(1) << fixed_buffer_shift;
		switch (layout) {
		case 1: return {base, whole};
		// Buffer 0 ends `edge` bytes into the arena, buffer 1 goes on.
		case 2: return {base - (gib - edge), gib - edge + whole};
		case 3: return {base, whole - edge};
		default: return {};
		}
	}

	void run()
	{
		while (!in_.empty()) {
			switch (in_.u8() % 8) {
			case 0:
			case 1: submit(); break;
			case 2:
			case 3: complete(); break;
			case 4: engine_.full = in_.flag(); break;
			case 5: run_waiters(); break;
			case 6: size_.store(in_.range(0, medium_max)); break;
			case 7: allocation_step(); break;
			}
		}
		drain();
	}

	void on_done(request &r, int64_t result)
	{
		FUZZ_CHECK(!in_submit_, "io_done called from inside submit()");
		FUZZ_CHECK(r.busy, "io_done for a request not submitted");
		r.calls++;
		FUZZ_CHECK(r.calls == 1, "io_done called twice");
		for (const auto &s : engine_.in_flight) {
			uint8_t op = s->sqe.opcode;
			bool rw = is_read_op(op) || is_write_op(op);
			FUZZ_CHECK(!rw || !owns(r, s->sqe),
				   "io_done while an SQE of the request is still in flight");
		}
		block_io &io = r.io;
		if (r.expect_invalid) {
			int64_t want = unsupported(io) ? -EOPNOTSUPP : -EINVAL;
			if (io.offset > submit_size_of(r) || io.length > submit_size_of(r) - io.offset)
				want = -EINVAL;
			FUZZ_CHECK(result == want, "an invalid request got " + std::to_string(result));
		} else if (r.injected) {
			FUZZ_CHECK(result == r.injected, "the engine's error was not passed on");
		} else if (r.saw_zero) {
			FUZZ_CHECK(result == -EIO, "a transfer that moved nothing was not -EIO");
		} else if (io.op == block_op::read || io.op == block_op::write) {
			FUZZ_CHECK(result == int64_t(io.length) || (io.length == 0 && result == 0),
				   "a read/write succeeded with a count other than its length");
			if (!r.racy) {
				uint64_t at = 0;
				for (const iovec &v : io.iov) {
					FUZZ_CHECK(std::memcmp(v.iov_base, medium_.data() + io.offset + at,
							       v.iov_len) == 0,
						   io.op == block_op::read ? "read returned other bytes"
									 : "write left other bytes");
					at += v.iov_len;
				}
			}
		} else {
			FUZZ_CHECK(result == 0, "a flush/discard/write-zeroes succeeded with a count");
			if (io.fua && (io.op == block_op::discard || io.op == block_op::write_zeroes))
				FUZZ_CHECK(r.changed_at != 0 && durable_upto_ > r.changed_at,
					   "a FUA discard/write-zeroes succeeded before an fdatasync "
					   "issued after its fallocate had succeeded");
		}
		r.busy = false;
	}

private:
	uint64_t submit_size_of(const request &r) const { return r.size_at_submit; }

	bool unsupported(const block_io &io) const
	{
		return (io.op == block_op::discard && !caps_.discard) ||
		       (io.op == block_op::write_zeroes && !caps_.write_zeroes) ||
		       (io.op == block_op::prefetch && (!caps_.prefetch || io.length > UINT32_MAX));
	}
	static bool changes(block_op op)
	{
		return op == block_op::write || op == block_op::discard || op == block_op::write_zeroes;
	}

	// file_queue's result filter: sees every CQE with the block_io it is
	// for, which tells which request an error or an empty transfer hit.
	static int64_t filter(void *ctx, const block_io &io, int64_t result)
	{
		auto *self = static_cast<driver *>(ctx);
		for (auto &r : self->reqs_) {
			if (&r.io != &io)
				continue;
			FUZZ_CHECK(r.busy, "a completion for a request not in flight");
			bool rw = io.op == block_op::read || io.op == block_op::write;
			if (r.expect_invalid || (rw && io.length == 0))
				return result; // the NOP carrying the early result
			const recorded_sqe *sqe = self->completing_;
			if (result == 0 && sqe && sqe->sqe.opcode == IORING_OP_FALLOCATE)
				r.changed_at = ++self->engine_.clock;
			if (result < 0)
				r.injected = result;
			else if (result == 0 && rw)
				r.saw_zero = true;
			return result;
		}
		fuzz::fail(__FILE__, __LINE__, "filter", "a completion for no request of ours");
	}

	void submit()
	{
		request &r = reqs_[in_.range(0, max_requests - 1)];
		if (r.busy)
			return;
		block_io &io = r.io;
		io.op = static_cast<block_op>(in_.range(0, 5));
		io.fua = in_.flag();
		uint64_t size = size_.load();
		bool aimed = in_.u8() % 8 != 0;
		io.offset = aimed ? in_.range(0, size) : in_.range(0, medium_max + 8);
		uint64_t room = aimed ? size - std::min(io.offset, size) : medium_max;
		io.length = in_.range(0, std::min<uint64_t>(room, request_max));
		const bool transfer = io.op == block_op::read || io.op == block_op::write;
		const size_t len = transfer ? io.length : 0;
		const uint8_t ramp = in_.u8();
		// Tiny pieces only for the first small_pieces iovecs: enough for
		// three SQEs' worth (IOV_MAX each), so the split and resume
		// paths still run, without the up to 16 Ki iovecs of a whole
		// buffer in 1-byte pieces, which cost most of an execution.
		constexpr size_t small_pieces = 2100;
		size_t piece = std::array<size_t, 5>{0, 1, 512, 4096, 3}[in_.range(0, 4)];
		const uint8_t layout = in_.u8();
		const bool in_arena = layout & 1;
		const size_t gap = std::array<size_t, 4>{0, 0, 1, 8}[layout >> 1 & 3];
		std::vector<size_t> &cuts = cuts_;
		cuts.clear();
		for (size_t at = 0; at < len;) {
			size_t cut = piece < 512 && cuts.size() >= small_pieces ? 4096 : piece;
			size_t n = cut ? std::min(cut, len - at) : len - at;
			cuts.push_back(n);
			at += n;
		}
		const size_t footprint = len + (cuts.empty() ? 0 : gap * (cuts.size() - 1));
		if (in_arena) {
			FUZZ_CHECK(footprint <= arena_slot, "a request larger than its arena slot");
			r.buffer = {arena + size_t(&r - reqs_.data()) * arena_slot, footprint};
		} else {
			r.heap.assign(footprint, 0);
			r.buffer = r.heap;
		}
		fuzz::fill_ramp(r.buffer, ramp);
		r.iovs.clear();
		r.iov_start.clear();
		for (size_t at = 0, off = 0; size_t n : cuts) {
			r.iovs.push_back({r.buffer.data() + at, n});
			r.iov_start.push_back(off);
			at += n + gap;
			off += n;
		}
		const fixed_buffer_area &area = engine_.area;
		const auto start = reinterpret_cast<uintptr_t>(r.buffer.data());
		r.must_be_fixed = area.size && len && gap == 0 && start >= area.base &&
				  start - area.base <= area.size &&
				  len <= area.size - (start - area.base);
		io.iov = r.iovs;
		io.done = &r.done;
		r.busy = true;
		r.calls = 0;
		r.racy = false;
		r.injected = 0;
		r.saw_zero = false;
		r.changed_at = 0;
		r.size_at_submit = size;
		r.expect_invalid = (io.op != block_op::flush &&
				    (io.offset > size || io.length > size - io.offset)) ||
				   unsupported(io);
		// Overlapping changes in flight make both sides' bytes undefined.
		for (auto &o : reqs_) {
			if (&o == &r || !o.busy)
				continue;
			bool overlap = o.io.offset < io.offset + io.length &&
				       io.offset < o.io.offset + o.io.length;
			if (overlap && (changes(io.op) || changes(o.io.op)))
				o.racy = r.racy = true;
		}
		in_submit_ = true;
		queue_->submit(io);
		in_submit_ = false;
	}

	// Which of our requests does this SQE serve? file_queue's user_data is
	// its own per-request object; the SQE's buffers or range tell ours.
	void complete()
	{
		if (engine_.in_flight.empty())
			return;
		size_t k = in_.range(0, engine_.in_flight.size() - 1);
		finish_sqe(k, in_.u8());
	}

	void finish_sqe(size_t k, uint8_t how)
	{
		std::unique_ptr<recorded_sqe> rec = std::move(engine_.in_flight[k]);
		engine_.in_flight.erase(engine_.in_flight.begin() + ptrdiff_t(k));
		const io_uring_sqe &sqe = rec->sqe;
		request *r = sqe.opcode == IORING_OP_NOP || sqe.opcode == IORING_OP_FSYNC ||
					     sqe.opcode == IORING_OP_FADVISE
				     ? nullptr
				     : find_request(sqe);
		int64_t result = 0;
		switch (sqe.opcode) {
		case IORING_OP_NOP:
			result = 0;
			break;
		case IORING_OP_READ:
		case IORING_OP_WRITE:
		case IORING_OP_READV:
		case IORING_OP_WRITEV:
		case IORING_OP_READ_FIXED:
		case IORING_OP_WRITE_FIXED:
			result = transfer(*r, sqe, how);
			break;
		case IORING_OP_FSYNC:
			FUZZ_CHECK(sqe.fsync_flags == IORING_FSYNC_DATASYNC, "flush without DATASYNC");
			result = outcome(how, 0);
			// Everything that completed before it was issued is durable.
			if (result == 0)
				durable_upto_ = std::max(durable_upto_, rec->issued);
			break;
		case IORING_OP_FADVISE:
			FUZZ_CHECK(sqe.fadvise_advice == POSIX_FADV_WILLNEED, "prefetch without WILLNEED");
			result = outcome(how, 0);
			break;
		case IORING_OP_FALLOCATE: {
			check_file(*r, sqe);
			uint64_t off = sqe.off, len = sqe.addr;
			int mode = int(sqe.len);
			FUZZ_CHECK(off == r->io.offset && len == r->io.length,
				   "fallocate range differs from the request");
			FUZZ_CHECK(mode == (r->io.op == block_op::discard
						    ? (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
						    : (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)),
				   "fallocate mode differs from the request");
			result = outcome(how, 0);
			if (result == 0)
				std::memset(medium_.data() + off, 0, len);
			break;
		}
		default:
			fuzz::fail(__FILE__, __LINE__, "opcode", "an SQE of an unexpected opcode");
		}
		// filter() sees the CQE with the request it is for (find_request
		// cannot tell two identical fallocates apart).
		completing_ = rec.get();
		rec->done->io_done(result);
		completing_ = nullptr;
	}

	// The request an SQE belongs to: the one file_queue is serving with it.
	// user_data is file_queue's private request; ours is found through
	// the block_io it points at (the first member after the vtable is
	// private, so match by buffers and range instead).
	request *find_request(const io_uring_sqe &sqe)
	{
		request *match = nullptr;
		for (auto &r : reqs_) {
			if (!r.busy)
				continue;
			// Identical fallocates may match twice; either will do.
			if (owns(r, sqe) && !match)
				match = &r;
		}
		FUZZ_CHECK(match != nullptr, "an SQE that belongs to no request in flight");
		return match;
	}

	FUZZ_ORACLE_LOOP bool inside_buffer(const request &r, const void *p, size_t n) const
	{
		auto *b = static_cast<const uint8_t *>(p);
		const uint8_t *lo = r.buffer.data(), *hi = lo + r.buffer.size();
		return b >= lo && b <= hi && n <= size_t(hi - b);
	}

	bool owns(const request &r, const io_uring_sqe &sqe)
	{
		const block_io &io = r.io;
		switch (sqe.opcode) {
		case IORING_OP_NOP: return r.expect_invalid || ((io.op == block_op::read || io.op == block_op::write) && io.length == 0);
		case IORING_OP_FSYNC: return io.op == block_op::flush && !r.expect_invalid;
		case IORING_OP_FALLOCATE:
			// A discard and a write-zeroes of one range differ by mode.
			return (io.op == block_op::discard || io.op == block_op::write_zeroes) &&
			       !r.expect_invalid && sqe.off == io.offset && sqe.addr == io.length &&
			       bool(sqe.len & FALLOC_FL_PUNCH_HOLE) == (io.op == block_op::discard);
		case IORING_OP_READ:
		case IORING_OP_WRITE:
		case IORING_OP_READ_FIXED:
		case IORING_OP_WRITE_FIXED:
			return is_read_op(sqe.opcode) == (io.op == block_op::read) &&
			       io.op != block_op::flush && !r.expect_invalid &&
			       inside_buffer(r, reinterpret_cast<void *>(sqe.addr), sqe.len);
		default: {
			if (is_read_op(sqe.opcode) != (io.op == block_op::read) ||
			    r.expect_invalid || r.buffer.empty())
				return false;
			auto *v = reinterpret_cast<const iovec *>(sqe.addr);
			return sqe.len > 0 && inside_buffer(r, v[0].iov_base, v[0].iov_len);
		}
		}
	}

	// Walks the caller's iovecs from byte `at` of the request on: take()
	// says whether [p, p + n) is the data that comes next, inside one
	// iovec or running on through iovecs adjacent in memory. One walk per
	// SQE: a vectored SQE has up to IOV_MAX pieces. The start is a binary
	// search: a request resumed after short completions has many SQEs,
	// and walking ~2,100 tiny iovecs from the front for each of them was
	// most of the campaign's time.
	class data_cursor {
	public:
		FUZZ_ORACLE_LOOP data_cursor(const request &r, uint64_t at)
			: v_(r.iovs.data()), n_(r.iovs.size())
		{
			const uint64_t *starts = r.iov_start.data();
			// The last iovec starting at or before `at`.
			const uint64_t *it = std::upper_bound(starts, starts + n_, at);
			k_ = it == starts ? 0 : size_t(it - starts) - 1;
			in_ = k_ < n_ ? at - starts[k_] : at;
			while (k_ < n_ && in_ >= v_[k_].iov_len)
				in_ -= v_[k_++].iov_len;
		}
		FUZZ_ORACLE_LOOP bool take(const uint8_t *p, uint64_t n)
		{
			if (k_ == n_ || base(k_) + in_ != p)
				return false;
			for (;;) {
				const uint64_t room = v_[k_].iov_len - in_;
				if (n < room) {
					in_ += n;
					return true;
				}
				n -= room;
				const uint8_t *end = base(k_) + v_[k_].iov_len;
				k_++;
				in_ = 0;
				if (n == 0)
					return true;
				if (k_ == n_ || base(k_) != end)
					return false;
			}
		}

	private:
		FUZZ_ORACLE_LOOP const uint8_t *base(size_t k) const
		{
			return static_cast<const uint8_t *>(v_[k].iov_base);
		}
		const iovec *v_;
		size_t n_;
		size_t k_ = 0;
		uint64_t in_ = 0;
	};

	void check_fixed(const io_uring_sqe &sqe) const
	{
		const fixed_buffer_area &area = engine_.area;
		FUZZ_CHECK(area.size != 0, "a fixed-buffer op with no buffers registered");
		const uintptr_t rel = uintptr_t(sqe.addr) - area.base;
		FUZZ_CHECK(uintptr_t(sqe.addr) >= area.base && rel < area.size,
			   "a fixed-buffer op outside the registered area");
		const uint64_t index = rel >> fixed_buffer_shift;
		FUZZ_CHECK(sqe.buf_index == index, "a fixed-buffer op names buffer " +
							   std::to_string(sqe.buf_index) + ", its memory is in " +
							   std::to_string(index));
		const uint64_t end = std::min<uint64_t>((index + 1) << fixed_buffer_shift, area.size);
		FUZZ_CHECK(rel + sqe.len <= end, "a fixed-buffer op runs past its buffer's end");
	}

	void check_file(const request &, const io_uring_sqe &sqe)
	{
		// Fields no file op of tcmud sets: zero, also where the engine
		// handed the SQE out uncleared (filled with 0xa5).
		FUZZ_CHECK(sqe.ioprio == 0 && sqe.personality == 0 && sqe.file_index == 0 &&
				   sqe.addr3 == 0 && (sqe.flags & ~(IOSQE_FIXED_FILE | IOSQE_ASYNC)) == 0,
			   "an SQE with a field left from an earlier use");
		if (sqe.flags & IOSQE_FIXED_FILE)
			FUZZ_CHECK(engine_.fixed && sqe.fd == 7, "a fixed file never registered");
		else
			FUZZ_CHECK(sqe.fd == backing_fd, "an SQE on another file");
	}

	// The script's outcome for one SQE that asked for `len` bytes.
	static int64_t outcome(uint8_t how, uint64_t len)
	{
		switch (how % 8) {
		case 3: return len > 1 ? int64_t(1 + (how >> 3) % (len - 1)) : int64_t(len);
		case 4: return 0;
		case 5: return -EAGAIN;
		case 6: return -EIO;
		case 7: return -ECANCELED;
		default: return int64_t(len);
		}
	}

	int64_t transfer(request &r, const io_uring_sqe &sqe, uint8_t how)
	{
		check_file(r, sqe);
		const block_io &io = r.io;
		const bool write = is_write_op(sqe.opcode);
		if (write && io.fua)
			FUZZ_CHECK(sqe.rw_flags & RWF_DSYNC, "a FUA write SQE without RWF_DSYNC");
		const bool fixed = sqe.opcode == IORING_OP_READ_FIXED ||
				   sqe.opcode == IORING_OP_WRITE_FIXED;
		if (fixed)
			check_fixed(sqe);
		else
			FUZZ_CHECK(!r.must_be_fixed, "a contiguous transfer inside the registered "
						     "area went without fixed buffers");
		std::span<const iovec> parts;
		iovec one{};
		if (sqe.opcode != IORING_OP_READV && sqe.opcode != IORING_OP_WRITEV) {
			one = {reinterpret_cast<void *>(sqe.addr), sqe.len};
			parts = {&one, 1};
		} else {
			FUZZ_CHECK(sqe.len >= 1 && sqe.len <= IOV_MAX, "iovec count out of range");
			parts = {reinterpret_cast<const iovec *>(sqe.addr), sqe.len};
		}
		const uint64_t len = check_parts(r, parts, sqe.off);
		int64_t res = outcome(how, len);
		if (res > 0)
			move_data(parts, sqe.off, uint64_t(res), write);
		return res;
	}

	// The oracle on an SQE's pieces: each inside the caller's buffer, all
	// inside the request's file range, and each carrying the caller's
	// data for the file bytes it moves. Returns the SQE's length.
	FUZZ_ORACLE_LOOP uint64_t check_parts(const request &r, std::span<const iovec> parts,
					      uint64_t off)
	{
		const block_io &io = r.io;
		uint64_t len = 0;
		for (size_t i = 0; i < parts.size(); i++) {
			FUZZ_CHECK(inside_buffer(r, parts.data()[i].iov_base, parts.data()[i].iov_len),
				   "an SQE buffer outside the caller's iovecs");
			len += parts.data()[i].iov_len;
		}
		FUZZ_CHECK(off >= io.offset && off + len <= io.offset + io.length,
			   "an SQE outside the request's file range: sqe " + std::to_string(off) +
				   "+" + std::to_string(len) + ", request " +
				   std::to_string(io.offset) + "+" + std::to_string(io.length));
		data_cursor cursor(r, off - io.offset);
		for (size_t i = 0; i < parts.size(); i++)
			FUZZ_CHECK(cursor.take(static_cast<const uint8_t *>(parts.data()[i].iov_base),
					       parts.data()[i].iov_len),
				   "an SQE's buffer and file offset disagree");
		return len;
	}

	// The medium side of a transfer that moved `n` bytes.
	FUZZ_ORACLE_LOOP void move_data(std::span<const iovec> parts, uint64_t at, uint64_t n,
					bool write)
	{
		for (size_t i = 0; i < parts.size() && n; i++) {
			const iovec &p = parts.data()[i];
			const uint64_t k = std::min<uint64_t>(n, p.iov_len);
			if (write)
				std::memcpy(medium_.data() + at, p.iov_base, k);
			else
				std::memcpy(p.iov_base, medium_.data() + at, k);
			at += k;
			n -= k;
		}
	}

	// One step on the sparse file: write pages, punch a range, or ask.
	void allocation_step()
	{
		static const int fd = memfd_create("fuzz-allocation", MFD_CLOEXEC);
		FUZZ_CHECK(fd >= 0, "memfd_create failed");
		constexpr uint64_t page = 4096, pages = medium_max / page;
		if (!alloc_queue_) {
			// A fresh file, all hole.
			FUZZ_CHECK(ftruncate(fd, 0) == 0 && ftruncate(fd, off_t(medium_max)) == 0,
				   "ftruncate failed");
			alloc_engine_.file = fd;
			alloc_queue_ = std::make_unique<file_queue>(alloc_engine_, fd, alloc_size_,
								    caps_, "fuzz-alloc:");
			alloc_data_.reset();
		}
		uint8_t what = in_.u8() % 3;
		if (what == 0) {
			uint64_t first = in_.range(0, pages - 1);
			uint64_t n = in_.range(1, pages - first);
			static const std::vector<uint8_t> ones(medium_max, 0x5a);
			FUZZ_CHECK(pwrite(fd, ones.data(), n * page, off_t(first * page)) ==
					   ssize_t(n * page),
				   "pwrite failed");
			for (uint64_t p = first; p < first + n; p++)
				alloc_data_.set(p);
			return;
		}
		if (what == 1) {
			uint64_t off = in_.range(0, medium_max - 1);
			uint64_t len = in_.range(1, medium_max - off);
			FUZZ_CHECK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					     off_t(off), off_t(len)) == 0,
				   "punching a hole failed");
			// Only whole pages become holes; the rest is zeroed data.
			for (uint64_t p = (off + page - 1) / page; (p + 1) * page <= off + len; p++)
				alloc_data_.reset(p);
			return;
		}
		uint64_t off = in_.range(0, medium_max - 1);
		uint64_t len = in_.range(1, medium_max - off);
		allocation_run run{.mapped = !in_.flag(), .length = in_.u64()};
		FUZZ_CHECK(alloc_queue_->allocation(off, len, &run) == 0, "allocation() failed");
		FUZZ_CHECK(run.length >= 1 && run.length <= len,
			   "an allocation run of " + std::to_string(run.length) + " bytes for " +
				   std::to_string(len));
		uint64_t end = off + run.length;
		if (!run.mapped) {
			for (uint64_t p = off / page; p * page < end; p++)
				FUZZ_CHECK(!alloc_data_.test(p), "data reported as a hole");
			return;
		}
		if (!alloc_data_.test(off / page))
			return; // a hole called data: allowed
		uint64_t p = off / page;
		while (p < pages && alloc_data_.test(p))
			p++;
		FUZZ_CHECK(end >= std::min(off + len, p * page), "a run of data cut short");
	}

	void run_waiters()
	{
		std::vector<io_completion *> w;
		w.swap(engine_.waiters);
		for (io_completion *c : w)
			c->io_done(0);
	}

	void drain()
	{
		engine_.full = false;
		for (int round = 0; round < 100000; round++) {
			if (!engine_.in_flight.empty()) {
				finish_sqe(0, 0);
				continue;
			}
			if (!engine_.waiters.empty()) {
				run_waiters();
				continue;
			}
			break;
		}
		for (const auto &r : reqs_)
			FUZZ_CHECK(!r.busy, "a request never completed");
		FUZZ_CHECK(queue_->parked() == 0, "requests still parked");
	}

	input &in_;
	std::vector<request> reqs_;
	backstore_caps caps_;
	std::atomic<uint64_t> size_{0};
	std::span<uint8_t> medium_;
	recording_engine engine_;
	std::unique_ptr<file_queue> queue_;
	const std::atomic<uint64_t> alloc_size_{medium_max};
	recording_engine alloc_engine_;
	std::unique_ptr<file_queue> alloc_queue_; // over the sparse file, once asked
	std::bitset<medium_max / 4096> alloc_data_; // its pages holding data
	bool in_submit_ = false;
	uint64_t durable_upto_ = 0; // every change completed before this clock is durable
	const recorded_sqe *completing_ = nullptr; // the SQE whose CQE is being delivered
	std::vector<size_t> cuts_; // submit()'s piece lengths, kept across runs
};

void request::done_t::io_done(int64_t result)
{
	current->on_done(*self, result);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet = [] {
		tcmud::set_log_level(tcmud::log_level::error);
		return true;
	}();
	(void)quiet;
	input in(data, size);
	driver d(in);
	d.run();
	return 0;
}
