// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A Ceph RBD image as a backstore, through librbd's asynchronous API.
//
// One image handle per device, shared by every queue (see rbd_queue.h for
// how completions reach each queue's own thread). One handle, not one per
// queue, because the image's exclusive lock belongs to a handle: several
// handles of one daemon would be several lock owners, and in exclusive mode
// only one of them could write. Measured (tests/bench/rbd_queues, memstore,
// 2 queues x depth 16, 4 KiB): the same CPU per I/O either way (randread
// ~17 us, randwrite ~32 us, librbd included) and IOPS within the noise of
// a loaded host: sharing costs nothing that could be seen.
//
// Several gateways on one image: the handle takes the image's exclusive
// lock (RBD_LOCK_MODE_EXCLUSIVE, which also stops librbd from handing it
// over on request) at open. Writes then run only while this handle owns
// the lock:
//   owner    writes go through;
//   standby  another client held the lock at open: writes are BUSY for
//            standby_grace (a gateway restarted after SIGKILL waits there
//            until librbd has broken its dead predecessor's lock, which
//            takes until the OSD drops the dead client's watch, ~30 s),
//            then DATA PROTECT; the lock is tried every second and
//            writes resume once it is ours;
//   lost     the lock went elsewhere: writes fail with DATA PROTECT, WRITE
//            PROTECTED (-EROFS), reads still work; never taken back by
//            itself, which would make two gateways take turns;
//   fenced   the cluster blocklisted this client (another gateway broke
//            the lock): every command fails with NOT READY, LOGICAL
//            UNIT IN PROCESS OF BECOMING READY (-ENOTCONN), which
//            initiators retry, while the per-device thread reopens the
//            image with a fresh client (new instance id), retrying with
//            bounded backoff; then standby or owner, as at open, except
//            that a lock held by someone else is DATA PROTECT at once (a
//            live client took it: no grace). The old client's blocklist
//            entry is then removed (it is shut down: nothing can be sent
//            through it), as tcmu-runner does, so entries do not pile up
//            for an hour on every failover.
// Each change is logged once. A per-device thread retries and watches the
// lock once a second; nothing on the data path waits for it.
//
// ALUA (rbd_failover.cpp, docs/rbd.md "ALUA"): with target port groups
// configured, the lock is recorded with the owner's group in the image's
// metadata (tcmu-runner's tcmu_rbd_locker_tag, so that a mixed pair agrees
// during a migration) and every gateway reports that group active/
// optimized. Where ALUA is implicit, a write that reaches a standby or lost
// gateway is the initiator's failover: the keeper breaks the owner's lock
// (which blocklists it) and takes it; writes are BUSY meanwhile. A gateway
// that lost the lock takes none over for takeover_holdoff, which bounds
// how often two initiators on different gateways can move it.
//
// The reopen swaps the session under running queues without a lock on
// the data path: a queue submits only inside a window it marks in its
// rbd_queue_probe (a seq_cst store, then the state load), and only while
// the state is not fenced. The reopening thread sets fenced first, then
// waits until each queue is outside its window and has nothing in
// librbd; from then on no queue touches the old session, which it closes.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rbd/rbd_config.h"
#include "rbd/rbd_service_map.h"
#include "rbd/rbd_session.h"
#include "tcmud/backstore.h"

namespace tcmud {

enum class rbd_lock_state : uint8_t {
	unshared,  // the image has no exclusive-lock feature: nothing to own
	owner,
	standby,
	lost,
	fenced,
};

const char *to_string(rbd_lock_state state);

struct rbd_open_options {
	// Measurement only: each queue opens its own image handle (which then
	// cannot write to an image with the exclusive-lock feature).
	bool handle_per_queue = false;
	// How long writes are BUSY rather than DATA PROTECT in standby.
	std::chrono::milliseconds standby_grace{45'000};
	// How often the lock is retried (standby) or checked (owner).
	std::chrono::milliseconds lock_poll{1'000};
	// After a blocklist: the first reopen attempt after reopen_backoff,
	// each failed one doubles the wait, up to reopen_backoff_max.
	std::chrono::milliseconds reopen_backoff{1'000};
	std::chrono::milliseconds reopen_backoff_max{30'000};
	// Implicit ALUA failover: after losing the lock (taken over, broken,
	// fenced), writes here are BUSY, without taking it back, this long.
	std::chrono::milliseconds takeover_holdoff{10'000};
};

// What the reopening thread needs to see of each queue (rbd_queue.h).
struct rbd_queue_probe {
	std::atomic<bool> in_submit{false};  // between the state check and librbd's return
	std::atomic<size_t> in_flight{0};    // requests given to librbd, not yet released
	// librbd's cache on: writes this queue's handle acknowledged since
	// its last successful flush. A fence drops what the cache held.
	std::atomic<uint64_t> unflushed{0};
};

class rbd_backstore final : public backstore {
public:
	// handler_ops::open.
	static setup_result<std::unique_ptr<backstore>> open(const backstore_config &cfg);
	static setup_result<std::unique_ptr<rbd_backstore>>
	open_with(const backstore_config &cfg, const rbd_open_options &options);
	~rbd_backstore() override;

	uint64_t size_bytes() const override { return size_.load(std::memory_order_acquire); }
	backstore_caps caps() const override { return caps_; }
	setup_result<void> resize(uint64_t new_size) override;
	setup_result<std::unique_ptr<backstore_queue>> open_queue(io_engine &engine) override;
	// state: "owner", "standby", "lost", "fenced", or "serving" for an
	// image without the exclusive-lock feature; the holder as the keeper
	// last saw it (at most lock_poll old in standby and lost).
	backstore_status status() const override;
	std::optional<uint16_t> owner_port_group() const override;
	void set_local_port_group(std::optional<uint16_t> group, bool implicit_failover) override;

	// --- for rbd_queue, on any queue thread ---
	// 0 if a write may go to librbd now, else the -errno it fails with.
	int write_gate() const;
	// The handle to submit on, or nullptr while fenced (-ENOTCONN). Only
	// inside the queue's probe window (in_submit set, seq_cst).
	rbd_image_t io_image() const;
	// A request ended with `result`: notices a lost lock or a fence, and
	// returns the result to report (a blocklisted client's -ESHUTDOWN is
	// -ENOTCONN: the device is reconnecting).
	int64_t note_result(int64_t result, bool writing);
	bool cache_enabled() const { return cache_enabled_; }
	// True once (and then false again) after a fence may have dropped
	// writes librbd's cache had acknowledged: the next SYNCHRONIZE CACHE
	// fails instead of answering GOOD for data that is gone.
	bool take_lost_writes() { return lost_writes_.exchange(false, std::memory_order_acq_rel); }
	void add_probe(rbd_queue_probe *probe);
	void remove_probe(rbd_queue_probe *probe);
	const std::string &log_prefix() const { return log_prefix_; }

	rbd_lock_state lock_state() const { return state_.load(std::memory_order_acquire); }
	// Sessions opened after a blocklist, and the current client's id.
	unsigned reopens() const { return reopens_.load(std::memory_order_acquire); }
	// Locks taken over from another gateway (implicit ALUA failover).
	unsigned takeovers() const { return takeovers_.load(std::memory_order_acquire); }
	uint64_t instance_id() const;

private:
	rbd_backstore(std::unique_ptr<rbd_session> session, const rbd_config &rcfg,
		      const backstore_config &cfg, const rbd_open_options &options,
		      uint64_t size, backstore_caps caps);
	void start_lock(bool exclusive_lock_feature);
	struct lock_attempt {
		rbd_lock_state state; // the state to enter
		int error;            // 0 when the lock is ours, else why not (-errno)
		std::string holder;   // who held it
	};
	lock_attempt take_lock(std::chrono::milliseconds grace);
	void lock_keeper();
	bool blocklisted();
	void reopen();
	bool wait_quiet();
	void note_dropped_writes();
	bool keeper_sleep(std::chrono::milliseconds d);
	void set_state(rbd_lock_state from, rbd_lock_state to, const std::string &why);
	std::string lock_owners() const;
	void note_holder(std::string who, bool us);
	// rbd_failover.cpp, keeper thread.
	void take_over(rbd_lock_state from);
	void write_lock_tag();
	void read_lock_tag(const std::string &holder);
	bool failover_wait(std::chrono::milliseconds d);
	void start_holdoff();
	bool in_holdoff() const;
	void request_takeover() const;
	void remove_stale_blocklist_entry(const std::string &address);
	// rbd_service_map.h, keeper thread: register the current client, and
	// publish the status when it changed (or always, with force).
	void register_gateway_now();
	void publish_gateway_status(bool force);

	// The session; replaced by reopen() under session_mutex_ (control
	// paths only: the keeper, resize). Queues read live_.
	std::unique_ptr<rbd_session> session_;
	std::atomic<rbd_session *> live_{nullptr};
	mutable std::mutex session_mutex_;
	rbd_config rcfg_;
	bool cache_enabled_ = false;
	bool exclusive_lock_ = false;  // the image's feature (set at open, then read-only)
	std::string target_;     // "pool/image"
	std::string log_prefix_;
	rbd_open_options options_;
	std::atomic<uint64_t> size_;
	backstore_caps caps_;

	std::atomic<rbd_lock_state> state_{rbd_lock_state::unshared};
	mutable std::mutex holder_mutex_;
	std::string holder_;         // lock_owners() as last seen
	bool holder_is_us_ = false;
	std::atomic<unsigned> reopens_{0};
	std::atomic<bool> lost_writes_{false};
	std::mutex probes_mutex_;
	std::vector<rbd_queue_probe *> probes_;
	std::chrono::steady_clock::time_point busy_until_{};
	// ALUA: our group (-1: none), and the owner's as the lock tag last
	// said (-1: none or not valid); see rbd_failover.cpp.
	std::atomic<int32_t> local_group_{-1};
	std::atomic<bool> implicit_failover_{false};
	std::atomic<int32_t> owner_group_{-1};
	std::atomic<bool> tag_dirty_{false};
	mutable std::atomic<bool> takeover_wanted_{false};
	// steady_clock nanoseconds until which writes here do not take over.
	std::atomic<int64_t> holdoff_until_ns_{0};
	std::atomic<unsigned> takeovers_{0};
	// The service map's counters (rbd_service_map.h): times the lock was
	// lost, commands that timed out; and what the keeper last published.
	std::atomic<uint64_t> lock_lost_{0};
	std::atomic<uint64_t> timed_out_{0};
	gateway_status published_{};
	bool warned_service_map_ = false;
	std::string tag_holder_;  // keeper: the holder the tag was last read for
	std::mutex keeper_mutex_;
	mutable std::condition_variable keeper_cv_;
	bool stop_ = false;
	std::thread keeper_;
};

} // namespace tcmud
