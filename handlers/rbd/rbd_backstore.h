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
//            the lock): everything fails with NOT READY, MANUAL
//            INTERVENTION REQUIRED (-ESHUTDOWN) until the device is
//            reopened.
// Each change is logged once. A per-device thread retries and watches the
// lock once a second; nothing on the data path waits for it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "rbd/rbd_config.h"
#include "rbd/rbd_session.h"
#include "tcmud/block_backend.h"

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
};

class rbd_backstore final : public backstore {
public:
	// handler_ops::open.
	static std::unique_ptr<backstore> open(const backstore_config &cfg, int *error,
					       std::string *reason);
	static std::unique_ptr<rbd_backstore> open_with(const backstore_config &cfg,
							const rbd_open_options &options,
							int *error, std::string *reason);
	~rbd_backstore() override;

	uint64_t size_bytes() const override { return size_.load(std::memory_order_acquire); }
	backstore_caps caps() const override { return caps_; }
	int resize(uint64_t new_size, std::string *reason) override;
	std::unique_ptr<backend_queue> open_queue(io_engine &engine) override;

	// --- for rbd_queue, on any queue thread ---
	// 0 if a write may go to librbd now, else the -errno it fails with.
	int write_gate() const;
	// A request ended with `result`: notices a lost lock or a fence.
	void note_result(int64_t result, bool writing);
	bool cache_enabled() const { return session_->cache_enabled(); }
	const std::string &log_prefix() const { return log_prefix_; }

	rbd_lock_state lock_state() const { return state_.load(std::memory_order_acquire); }

private:
	rbd_backstore(std::unique_ptr<rbd_session> session, const rbd_config &rcfg,
		      const backstore_config &cfg, const rbd_open_options &options,
		      uint64_t size, backstore_caps caps);
	void start_lock(bool exclusive_lock_feature);
	void lock_keeper();
	void set_state(rbd_lock_state from, rbd_lock_state to, const std::string &why);
	std::string lock_owners() const;

	std::unique_ptr<rbd_session> session_;
	std::string target_;     // "pool/image"
	std::string log_prefix_;
	rbd_open_options options_;
	std::atomic<uint64_t> size_;
	backstore_caps caps_;

	std::atomic<rbd_lock_state> state_{rbd_lock_state::unshared};
	std::chrono::steady_clock::time_point busy_until_{};
	std::mutex keeper_mutex_;
	std::condition_variable keeper_cv_;
	bool stop_ = false;
	std::thread keeper_;
};

} // namespace tcmud
