// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/queue_worker.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "log/log.h"
#include "scsi/sense_builder.h"
#include "stats/latency_clock.h"
#include "tcmud/scsi_limits.h"

namespace tcmud {

// A command slot: the SCSI layer's reusable command object plus the ring's
// id for it. Each slot is its own command_owner, so a completion finds its
// slot without any lookup.
struct queue_worker::slot final : scsi::command_owner {
	queue_worker *worker = nullptr;
	uint16_t cmd_id = 0;
	uint32_t generation = 0; // the ring's, when the command was taken
	uint64_t fetched_at = 0; // latency_clock ticks
	slot *next_free = nullptr; // in queue_worker::free_slots_
	bool in_flight = false;
	bool aborted = false; // a TMR named it; it is still answered once
	// Left behind by a stop that gave up (abandon()): the worker is gone.
	std::atomic<bool> orphaned{false};
	scsi::command cmd;

	void command_done(scsi::command &) override { worker->command_finished(*this); }
	void command_wake(scsi::command &) override
	{
		// Any thread (the queue that released the range).
		if (orphaned.load(std::memory_order_acquire))
			return;
		{
			std::lock_guard lock(worker->woken_mutex_);
			worker->woken_.push_back(this);
		}
		worker->poke();
	}
};

// The uio fd became readable: the kernel queued commands.
class queue_worker::doorbell final : public io_completion {
public:
	explicit doorbell(queue_worker &w) : w_(w) {}
	void io_done(int64_t result) override
	{
		if (result < 0) {
			// The watch is gone: without a new one this queue would
			// never hear of another command. Watch again; a watch that
			// keeps failing ends the queue, loudly.
			bool retry = ++failures_ <= max_failures;
			log_error(w_.params_.log_prefix, "queue %u: uio poll failed: %s; %s",
				  w_.params_.queue_index, strerror(int(-result)),
				  retry ? "watching again"
					: "giving up, no doorbell: the queue stops serving");
			if (retry)
				w_.doorbell_watch_ = w_.engine_->watch_readable(w_.wake_fd(), this);
			else
				w_.stopping_.store(true, std::memory_order_release);
			return;
		}
		failures_ = 0;
		// Each uio notification wakes the multishot poll, which then
		// finds the fd readable (uio's count differs from the one this
		// fd last read) and posts a CQE, read or not: the read() that
		// would consume the count is a syscall per round saved. Only a
		// one-shot watch (a kernel before 5.13) must consume it, or it
		// would complete again at once on re-arm.
		if (!w_.engine_->watch_edge_triggered(w_.doorbell_watch_)) [[unlikely]]
			w_.ack_doorbell();
		w_.drain_ring();
	}

private:
	static constexpr unsigned max_failures = 3; // in a row
	queue_worker &w_;
	unsigned failures_ = 0;
};

// Another thread called engine_->wake(): range-lock grants or stop.
class queue_worker::waker final : public io_completion {
public:
	explicit waker(queue_worker &w) : w_(w) {}
	void io_done(int64_t) override { w_.resume_woken(); }

private:
	queue_worker &w_;
};

queue_worker::queue_worker(queue_params params) : params_(std::move(params))
{
	if (!params_.resets)
		params_.resets = std::make_shared<reset_barrier>(params_.reset_ring);
}

queue_worker::~queue_worker()
{
	stop();
}

setup_result<void> queue_worker::start()
{
	latency_clock::calibrate();
	thread_ = std::thread([this] { thread_main(); });
	std::unique_lock lock(setup_mutex_);
	setup_cv_.wait(lock, [this] { return setup_finished_; });
	if (!setup_done_) {
		lock.unlock();
		thread_.join();
	}
	return setup_done_;
}

void queue_worker::setup_done(setup_result<void> done)
{
	std::lock_guard lock(setup_mutex_);
	setup_done_ = std::move(done);
	setup_finished_ = true;
	setup_cv_.notify_all();
}

void queue_worker::request_stop()
{
	if (!thread_.joinable() || stopping_.load(std::memory_order_acquire))
		return;
	stopping_.store(true, std::memory_order_release);
	poke();
}

void queue_worker::stop(unsigned drain_timeout_ms)
{
	if (!thread_.joinable())
		return;
	if (!stopping_.load(std::memory_order_acquire)) {
		drain_timeout_ms_ = drain_timeout_ms;
		stopping_.store(true, std::memory_order_release);
		poke();
	}
	thread_.join();
}

void queue_worker::thread_main()
{
	if (params_.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(params_.cpu, &set);
		// The kernel steers a command to the queue of the CPU that submitted
		// it; running that queue's worker there keeps the ring's cache lines
		// on one CPU. Not fatal: the worker is correct anywhere.
		if (int e = pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
			log_warn(params_.log_prefix, "queue %u: cannot pin to CPU %d: %s",
				 params_.queue_index, params_.cpu, strerror(e));
		else
			pinned_cpu_ = params_.cpu;
	}
	setup_result<void> done = setup_on_thread();
	if (!done) {
		// Torn down here, on the thread the ring belongs to.
		backstore_queue_.reset();
		fixed_buffers_.reset();
		engine_.reset();
		doorbell_.reset();
		setup_error e = done.error();
		e.message = "queue " + std::to_string(params_.queue_index) + ": " + e.message;
		setup_done(std::move(e));
		return;
	}
	barrier_id_ = params_.resets->join([this] { poke(); });
	setup_done({});
	serve();
	// From here on this queue fetches nothing: a reset need not wait for
	// it (its commands in flight, if any, are answered or abandoned).
	params_.resets->leave(barrier_id_);
	log_debug(params_.log_prefix, "queue %u: loop ended, %zu in flight", params_.queue_index, busy_);
	// Leave nothing of ours in the kernel's view: the ring's last answers
	// are published, the engine (and its polls) goes with this thread.
	flush_completions();
	if (busy_ > 0) {
		abandon();
		return;
	}
	// The backstore's queue unregisters its files from the engine, so it
	// goes first; the engine then cancels our polls and closes its io_uring.
	backstore_queue_.reset();
	fixed_buffers_.reset();
	{
		// The thread may also end on its own (a ring error); from here on
		// no other thread may reach the engine.
		std::lock_guard lock(woken_mutex_);
		engine_alive_ = false;
	}
	engine_.reset();
	doorbell_.reset();
	log_info(params_.log_prefix, "queue %u: stopped after %llu commands (%llu errors, %llu "
		 "malformed) and %llu doorbells", params_.queue_index,
		 (unsigned long long)stats_.commands.load(), (unsigned long long)stats_.errors.load(),
		 (unsigned long long)stats_.malformed.load(), (unsigned long long)stats_.doorbells.load());
}

// Every error is the caller's to log (start()); thread_main names the queue.
setup_result<void> queue_worker::setup_on_thread()
{
	auto ring = command_ring::attach(params_.map, params_.ring);
	if (!ring)
		return ring.error();
	ring_.emplace(std::move(*ring));

	uring_options opts;
	opts.entries = params_.uring_entries;
	auto engine = uring_engine::create(opts);
	if (!engine)
		return engine.error();
	engine_ = std::move(*engine);
	register_data_area();
	auto opened = params_.store->open_queue(*engine_);
	if (!opened)
		return opened.error();
	backstore_queue_ = std::move(*opened);

	size_t n = params_.ring.max_in_flight;
	slots_ = std::make_unique<slot[]>(n);
	unpublished_.reserve(n);
	for (size_t i = n; i-- > 0;) {
		slots_[i].worker = this;
		slots_[i].next_free = free_slots_;
		free_slots_ = &slots_[i];
	}

	{
		std::lock_guard lock(woken_mutex_);
		engine_alive_ = true;
	}
	doorbell_ = std::make_unique<doorbell>(*this);
	waker_ = std::make_unique<waker>(*this);
	engine_->set_wake_completion(waker_.get());
	doorbell_watch_ = engine_->watch_readable(wake_fd(), doorbell_.get());
	return {};
}

// Before the backstore's queue opens (it reads the engine's fixed buffers
// then). Only where the kernel promises that the data area's pages stay
// put (docs/kmod.md, "io_uring fixed buffers over the data area"); a
// failure is not the device's: reads and writes then pin per I/O, as on
// the stock modules.
void queue_worker::register_data_area()
{
	const ring_geometry &g = ring_->geometry();
	if (!g.data_area_fixed)
		return;
	if (!params_.fixed_buffers) {
		log_info(params_.log_prefix, "queue %u: the kernel offers a fixed data area, "
			 "but fixed_buffers = false: not registered", params_.queue_index);
		return;
	}
	auto reg = engine_->register_buffers(params_.map.subspan(g.data_off, g.data_size));
	if (!reg) {
		log_warn(params_.log_prefix, "queue %u: %s; reads and writes use plain "
			 "buffers%s", params_.queue_index, reg.error().what().c_str(),
			 reg.error().error == ENOMEM || reg.error().error == EPERM
				 ? " (RLIMIT_MEMLOCK without CAP_IPC_LOCK?)" : "");
		return;
	}
	fixed_buffers_ = std::move(*reg);
	data_area_registered_ = true;
	log_info(params_.log_prefix, "queue %u: data area (%zu KiB) registered as io_uring "
		 "fixed buffers", params_.queue_index, g.data_size >> 10);
}

void queue_worker::serve()
{
	// Commands may have been queued before we started watching.
	drain_ring();
	flush_completions();
	while (!stopping_.load(std::memory_order_acquire)) {
		int rc = engine_->run_once(1);
		if (rc < 0) {
			log_error(params_.log_prefix, "queue %u: io_uring failed: %s",
				  params_.queue_index, strerror(-rc));
			break;
		}
		// A completion may have freed a slot that an entry was waiting
		// for, or let a broken ring be reset. Only then: new entries
		// ring the doorbell, which drains by itself, and a drain
		// costs a look at the mailbox and the ring (~60 instructions)
		// per round of the loop.
		if (drain_again_)
			drain_ring();
		flush_completions();
	}
	drain_in_flight();
}

// Stop: no new commands are taken, but what is in flight finishes, so no
// initiator sees an aborted command because the daemon was told to stop.
// Entries the kernel queued after that stay in the ring, never fetched: the
// next daemon's take-over completes them with BUSY and the initiator
// retries them (docs/daemon.md, "Stopping and restarting").
void queue_worker::drain_in_flight()
{
	using clock = std::chrono::steady_clock;
	auto deadline = clock::now() + std::chrono::milliseconds(drain_timeout_ms_);
	__kernel_timespec tick{0, 100'000'000};
	size_t at_stop = busy_;
	while (busy_ > 0 && clock::now() < deadline) {
		if (engine_->run_once(1, &tick) < 0)
			break;
		resume_woken();
		flush_completions();
	}
	// Counted either way, so the log shows that a stop dropped nothing.
	if (busy_ > 0)
		log_warn(params_.log_prefix, "queue %u: drain gave up: %zu of %zu commands in "
			 "flight finished, %zu left unanswered", params_.queue_index,
			 at_stop - busy_, at_stop, busy_);
	else
		log_info(params_.log_prefix, "queue %u: drained: %zu commands in flight finished, "
			 "none left unanswered", params_.queue_index, at_stop);
}

// The drain gave up: backing I/O of busy_ commands is still running in the
// kernel (an NFS hard mount, a multipath device queueing without a path).
// That I/O reads from and writes into the command slots' buffers and
// completes into this io_uring; freeing them would let a late read land in
// reused heap, or a late write send whatever lives there now to disk. So
// they are deliberately never freed, and nothing reaps their completions.
// The thread ends; the device keeps its mapping (the data area) likewise.
void queue_worker::abandon()
{
	log_error(params_.log_prefix, "queue %u: %zu commands still have backing I/O in flight "
		  "after the drain timeout: their buffers, command slots and io_uring are left "
		  "allocated for good (leaked on purpose, so their late completion cannot touch "
		  "freed memory); the kernel fails them when their cmd_time_out expires",
		  params_.queue_index, busy_);
	{
		std::lock_guard lock(woken_mutex_);
		engine_alive_ = false;
	}
	for (size_t i = 0; i < params_.ring.max_in_flight; ++i)
		slots_[i].orphaned.store(true, std::memory_order_release);
	// Reachable from a global, so leak checkers see it as kept, not lost.
	static std::mutex kept_mutex;
	static auto *kept = new std::vector<void *>;
	std::lock_guard lock(kept_mutex);
	kept->push_back(slots_.release());
	kept->push_back(backstore_queue_.release());
	// Unregistering would wait for the stuck I/O: the buffers go with
	// the engine, which stays.
	fixed_buffers_.release();
	kept->push_back(engine_.release());
	kept->push_back(doorbell_.release());
	kept->push_back(waker_.release());
	abandoned_ = true;
}

// Any thread: makes the worker's loop look at its wake list and at stop.
void queue_worker::poke()
{
	std::lock_guard lock(woken_mutex_);
	if (engine_alive_)
		engine_->wake();
}

int queue_worker::wake_fd() const
{
	return params_.uio.fd();
}

void queue_worker::ack_doorbell()
{
	// uio counts interrupts; reading consumes the count so the poll waits
	// for the next one. The fd is non-blocking (tcmu_device opens it so):
	// -EAGAIN just means no new count.
	uint32_t count;
	if (int rc = params_.uio.read_event(count); rc < 0 && rc != -EAGAIN)
		log_debug(params_.log_prefix, "queue %u: doorbell read: %s", params_.queue_index,
			  strerror(-rc));
}

void queue_worker::drain_ring()
{
	if (stopping_.load(std::memory_order_relaxed))
		return;
	uint64_t fetched_at = 0; // latency_clock ticks, read once per batch with a command
	bool holding = false;
	for (;;) {
		sync_ring();
		if ((holding = hold_for_reset()))
			break;
		while (free_slots_) {
			auto ev = ring_->next();
			if (!ev)
				break;
			if (auto *rc = std::get_if<ring_command>(&*ev)) {
				if (!fetched_at)
					fetched_at = latency_clock::now();
				dispatch(*rc, fetched_at);
			}
			else if (auto *bad = std::get_if<ring_malformed>(&*ev))
				refuse(*bad);
			else if (auto *tmr = std::get_if<ring_tmr>(&*ev))
				task_management(*tmr);
		}
		if (!ring_->broken())
			break;
		wants_reset_ = true; // and hold_for_reset() asks for it
	}
	// Entries may wait in the ring for a free slot, or for a reset: the
	// loop drains again after the next completions or wake-up (serve()).
	drain_again_ = holding || !free_slots_ || ring_->full() || ring_->broken();
}

// An administrator's action/reset_ring (or another queue's recovery on the
// multi-queue kernel, where it resets every ring) failed every command in
// flight: start over at the ring's new position. Commands of ours still
// running are not the kernel's any more; their results are dropped when they
// finish (their cmd_ids may already name new commands).
void queue_worker::sync_ring()
{
	if (ring_->sync_with_kernel())
		ring_was_reset();
}

void queue_worker::ring_was_reset()
{
	stats_.ring_reset_seen();
	// Every command in flight now belongs to an older generation.
	stale_busy_ = busy_;
	if (busy_ == 0) {
		log_warn(params_.log_prefix, "queue %u: the kernel reset the ring "
			 "(action/reset_ring) with nothing in flight here; serving from the ring's "
			 "start", params_.queue_index);
		return;
	}
	log_warn(params_.log_prefix, "queue %u: the kernel reset the ring (action/reset_ring): "
		 "%zu commands in flight here were failed by it; their results will be dropped, "
		 "and nothing is fetched until their I/O has ended: then the ring is reset again "
		 "so that commands queued meanwhile (whose data blocks that I/O may have written) "
		 "are retried with BUSY", params_.queue_index, busy_);
}

// Whether fetching must wait for a ring reset (reset_barrier.h); false
// once none is needed or it is done and the ring serves again.
//
// A ring whose framing we lost is stopped (next() returns nothing); after
// a reset the kernel did on its own, commands of ours whose I/O still runs
// may write into data blocks the kernel hands to new commands. Either way
// this queue asks for a reset of its own, done once no queue of the device
// has anything in flight, so no late completion can meet a reused cmd_id or
// data block; commands in the ring then are answered BUSY by the kernel and
// retried by the initiator.
bool queue_worker::hold_for_reset()
{
	if (recovery_given_up_)
		return true;
	// Old I/O may still land in the data area.
	if (stale_busy_ > 0)
		return true;
	reset_barrier &resets = *params_.resets;
	if (wants_reset_ && !at_barrier_ && !resets.pending())
		resets.request();
	if (!at_barrier_ && !resets.pending())
		return false;
	if (busy_ > 0)
		return true; // our commands finish first
	flush_completions();
	at_barrier_ = true;
	std::optional<int> done = resets.arrive(barrier_id_);
	if (!done)
		return true; // another queue still has commands in flight
	at_barrier_ = false;
	int rc = *done;
	if (rc == 0)
		rc = ring_->reset();
	if (rc < 0) {
		log_error(params_.log_prefix, "queue %u: cannot reset the ring (%s): the queue stays "
			  "stopped", params_.queue_index, strerror(-rc));
		recovery_given_up_ = true;
		return true;
	}
	if (wants_reset_) {
		stats_.ring_recovered();
		log_warn(params_.log_prefix, "queue %u: ring reset by tcmud once nothing was in "
			 "flight (commands left in it were answered BUSY and are retried by the "
			 "initiator); serving again", params_.queue_index);
	}
	wants_reset_ = false;
	return false;
}

// A TMR entry lists the ids of this queue's commands that the kernel
// aborted (each queue of the patched kernel gets its own list, queue 0 one
// even when empty; ids are per queue, so they are looked up here only).
// The kernel still waits for every listed command's response, which frees
// its data area: an aborted command whose backstore I/O is running must not
// be answered before that I/O ends, or the kernel would hand its data blocks
// to a new command under the I/O. So it completes as usual, once, and the
// target core discards the status of an aborted command. An id that is not
// in flight here was answered already (the response may be unpublished) and
// needs nothing.
//
// The slots are searched, not indexed by cmd_id: a TMR is rare, and an index
// kept per command cost a store at each end of every command and 512 KiB
// per queue. Only commands of the ring's current generation count: an older
// one's cmd_id may name a new command.
void queue_worker::task_management(const ring_tmr &tmr)
{
	std::vector<uint16_t> ids(tmr.cmd_ids.begin(), tmr.cmd_ids.end());
	std::sort(ids.begin(), ids.end());
	size_t found = 0;
	for (size_t i = 0; i < params_.ring.max_in_flight; ++i) {
		slot &s = slots_[i];
		if (s.in_flight && !s.aborted && s.generation == ring_->generation() &&
		    std::binary_search(ids.begin(), ids.end(), s.cmd_id)) {
			s.aborted = true;
			++found;
		}
	}
	stats_.task_management(found);
	std::string_view name = tmr_name(tmr.tmr_type);
	log_info(params_.log_prefix, "queue %u: task management %.*s: %zu of %zu listed commands "
		 "in flight here; they are answered when their I/O ends", params_.queue_index,
		 static_cast<int>(name.size()), name.data(), found, tmr.cmd_ids.size());
}

void queue_worker::dispatch(const ring_command &rc, uint64_t fetched_at)
{
	slot *s = free_slots_;
	free_slots_ = s->next_free;
	++busy_;
	stats_.command_started(busy_);
	s->cmd_id = rc.cmd_id;
	s->generation = ring_->generation();
	s->fetched_at = fetched_at;
	s->in_flight = true;
	s->aborted = false;
	s->cmd.reset(rc.cdb, rc.data_iovs(), s);
	params_.lu->execute(s->cmd, *backstore_queue_);
}

void queue_worker::refuse(const ring_malformed &bad)
{
	stats_.malformed_entry();
	log_error(params_.log_prefix, "queue %u: malformed ring entry (cmd_id %u): %.*s%s",
		  params_.queue_index, bad.cmd_id, int(to_string(bad.reason).size()),
		  to_string(bad.reason).data(),
		  bad.ring_broken ? "; ring stopped, reset once what it holds is answered" : "");
	if (!bad.needs_response)
		return;
	// The entry is framed well but its contents are not trustworthy: fail
	// it as an internal target failure rather than touch its buffers, in
	// the sense format the initiator chose (D_SENSE), as for any command.
	std::array<uint8_t, sense_buffer_size> sense{};
	size_t len = scsi::sense_builder(scsi::HARDWARE_ERROR,
					 scsi::ASC_INTERNAL_TARGET_FAILURE)
			     .build(scsi::sense_format_for(params_.lu->descriptor_sense()), sense);
	ring_->complete(bad.cmd_id, scsi::SAM_STAT_CHECK_CONDITION, std::span(sense).first(len));
	completions_pending_ = true;
}

void queue_worker::command_finished(slot &s)
{
	const scsi::command &c = s.cmd;
	uint64_t read_len = c.read_len();
	bool good = c.status() == scsi::SAM_STAT_GOOD;
	stats_.command_done(busy_ - 1, good, read_len, c.written_bytes());
	if (!good && c.status() == scsi::SAM_STAT_CHECK_CONDITION)
		if (int key = scsi::sense_key_of(c.sense()); key >= 0)
			stats_.check_condition(uint8_t(key));
	// Before writing into the ring: a reset since would make us write over
	// an entry that is not ours.
	if (ring_->sync_before_answer())
		ring_was_reset();
	if (s.generation != ring_->generation() && stale_busy_ > 0 && --stale_busy_ == 0) {
		// The last I/O of the failed commands has ended: commands the
		// kernel queued since may have data blocks it wrote into.
		wants_reset_ = true;
		drain_again_ = true;
		log_info(params_.log_prefix, "queue %u: the I/O of the commands the ring reset "
			 "failed has ended; resetting the ring once more", params_.queue_index);
	}
	if (s.generation == ring_->generation()) {
		if (!unpublished_.empty() && unpublished_.back().fetched_at == s.fetched_at)
			unpublished_.back().commands++;
		else
			unpublished_.push_back({s.fetched_at, 1});
		uint32_t len = read_len > UINT32_MAX ? UINT32_MAX : uint32_t(read_len);
		if (good)
			ring_->complete_good(s.cmd_id, len);
		else
			ring_->complete(s.cmd_id, c.status(), c.sense(), len);
		completions_pending_ = true;
	} else {
		stats_.stale_result();
		log_debug(params_.log_prefix, "queue %u: cmd_id %u finished after a ring reset: "
			  "result dropped", params_.queue_index, s.cmd_id);
	}
	if (s.aborted)
		log_debug(params_.log_prefix, "queue %u: aborted cmd_id %u answered", params_.queue_index,
			  s.cmd_id);
	s.in_flight = false;
	s.next_free = free_slots_;
	free_slots_ = &s;
	--busy_;
}

void queue_worker::flush_completions()
{
	if (!completions_pending_)
		return;
	completions_pending_ = false;
	// A reset since the answers were written: they are void, and a tail
	// past them would complete the kernel's new entries.
	sync_ring();
	bool published = ring_->publish();
	// Before the doorbell: whoever sees these completions also finds them
	// in the histogram.
	record_latencies();
	if (!published)
		return;
	// One doorbell for the whole batch. The kernel ignores the value: the
	// uio device written to names the queue.
	stats_.doorbell();
	if (int rc = params_.uio.notify(); rc < 0)
		log_error(params_.log_prefix, "uio write: %s", strerror(-rc));
}

// The batch is now in the ring for the kernel: each command's latency runs
// from the ring batch it was fetched in to here, one clock read per batch.
void queue_worker::record_latencies()
{
	if (unpublished_.empty())
		return;
	uint64_t now = latency_clock::now();
	for (const fetch_run &run : unpublished_)
		stats_.latency_ns(latency_clock::to_ns(now - run.fetched_at), run.commands);
	unpublished_.clear();
}

bool queue_worker::probe_alive()
{
	bool alive = probe_answered_.load(std::memory_order_acquire) >= probes_sent_;
	probe_sent_.store(++probes_sent_, std::memory_order_release);
	poke();
	return alive;
}

void queue_worker::stall_for_test(unsigned ms)
{
	test_stall_ms_.store(ms, std::memory_order_release);
	poke();
}

void queue_worker::resume_woken()
{
	if (unsigned ms = test_stall_ms_.exchange(0, std::memory_order_acq_rel)) {
		log_warn(params_.log_prefix, "queue %u: stalled on purpose for %u ms (test hook)",
			 params_.queue_index, ms);
		std::this_thread::sleep_for(std::chrono::milliseconds(ms));
	}
	// After the stall: a stalled loop must not look alive to the watchdog.
	probe_answered_.store(probe_sent_.load(std::memory_order_acquire),
			      std::memory_order_release);
	// Another queue asked for a ring reset (reset_barrier.h): this queue
	// stops fetching and arrives once its commands are done.
	if (params_.resets->pending())
		drain_again_ = true;
	std::vector<slot *> batch;
	{
		std::lock_guard lock(woken_mutex_);
		batch.swap(woken_);
	}
	for (slot *s : batch)
		params_.lu->resume(s->cmd, *backstore_queue_);
}

} // namespace tcmud
