// SPDX-License-Identifier: GPL-2.0-or-later
#include "rbd/rbd_backstore.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "log/log.h"
#include "rbd/rbd_queue.h"

namespace tcmud {
namespace {

// A reopen's new session with the image's size then, or why there is none.
struct sized_session {
	std::unique_ptr<rbd_session> session;
	uint64_t size = 0;
};

setup_result<sized_session> open_sized_session(const rbd_config &cfg)
{
	auto opened = rbd_session::open(cfg);
	if (!opened)
		return opened.error();
	sized_session s{std::move(*opened)};
	// librbd returns -errno.
	if (int r = rbd_get_size(s.session->image(), &s.size); r < 0)
		return setup_error{-r, "cannot read its size"};
	return s;
}

} // namespace

const char *to_string(rbd_lock_state state)
{
	switch (state) {
	case rbd_lock_state::unshared: return "unshared";
	case rbd_lock_state::owner: return "owner";
	case rbd_lock_state::standby: return "standby";
	case rbd_lock_state::lost: return "lost";
	case rbd_lock_state::fenced: return "fenced";
	}
	return "?";
}

setup_result<std::unique_ptr<backstore>> rbd_backstore::open(const backstore_config &cfg)
{
	auto store = open_with(cfg, rbd_open_options{});
	if (!store)
		return store.error();
	return std::unique_ptr<backstore>(std::move(*store));
}

setup_result<std::unique_ptr<rbd_backstore>>
rbd_backstore::open_with(const backstore_config &cfg, const rbd_open_options &options)
{
	auto parsed = parse_rbd_config(cfg.cfgstring);
	if (!parsed)
		return parsed.error();
	const rbd_config &rcfg = *parsed;
	if (cfg.dev_size == 0 || cfg.block_size == 0)
		return setup_error{EINVAL, "device size or block size is 0"};
	auto opened = rbd_session::open(rcfg);
	if (!opened)
		return opened.error();
	std::unique_ptr<rbd_session> session = std::move(*opened);
	const std::string target = rcfg.pool + "/" + rcfg.image;

	// librbd returns -errno.
	uint64_t image_size = 0;
	if (int r = rbd_get_size(session->image(), &image_size); r < 0)
		return setup_error{-r, target + ": cannot read its size"};
	// Like tcmu-runner: the LUN is the image, byte for byte. A larger
	// image would hide data; a smaller one cannot be served.
	if (image_size != cfg.dev_size)
		return setup_error{EINVAL,
				   "image " + target + " is " + std::to_string(image_size) +
					   " bytes but the device size is " +
					   std::to_string(cfg.dev_size),
				   "make them equal (rbd resize, or the device's dev_size)"};
	rbd_image_info_t info{};
	if (int r = rbd_stat(session->image(), &info, sizeof(info)); r < 0)
		return setup_error{-r, target + ": rbd_stat"};
	uint64_t features = 0;
	if (int r = rbd_get_features(session->image(), &features); r < 0)
		return setup_error{-r, target + ": cannot read its features"};
	uint64_t flags = 0;
	rbd_get_flags(session->image(), &flags);

	backstore_caps caps;
	// rbd_skip_partial_discard is off (rbd_session), so a discard zeroes
	// what it cannot deallocate: reads after it return zeroes.
	caps.discard = true;
	caps.discard_zeroes = true;
	caps.write_zeroes = true;
	caps.compare_and_write = true;
	caps.optimal_io_bytes = static_cast<uint32_t>(std::min<uint64_t>(info.obj_size, UINT32_MAX));

	std::unique_ptr<rbd_backstore> store(
		new rbd_backstore(std::move(session), rcfg, cfg, options, image_size, caps));
	store->start_lock((features & RBD_FEATURE_EXCLUSIVE_LOCK) != 0);
	log_info(cfg.log_prefix,
		 "serving rbd image %s (%" PRIu64 " bytes, %" PRIu64 "-byte objects) as %s; "
		 "librbd cache %s (%s); exclusive lock: %s",
		 target.c_str(), image_size, info.obj_size, store->session_->who().c_str(),
		 store->cache_enabled() ? "ON (writes are acknowledged before the OSDs "
					  "have them; FUA and SYNCHRONIZE CACHE flush)"
					: "off",
		 store->session_->cache_source(), to_string(store->lock_state()));
	return store;
}

rbd_backstore::rbd_backstore(std::unique_ptr<rbd_session> session, const rbd_config &rcfg,
			     const backstore_config &cfg, const rbd_open_options &options,
			     uint64_t size, backstore_caps caps)
	: session_(std::move(session)), rcfg_(rcfg), target_(rcfg.pool + "/" + rcfg.image),
	  log_prefix_(cfg.log_prefix), options_(options), size_(size), caps_(caps)
{
	live_.store(session_.get(), std::memory_order_release);
	cache_enabled_ = session_->cache_enabled();
}

// Keeper thread (and open): the lock holder as last seen, for status().
void rbd_backstore::note_holder(std::string who, bool us)
{
	std::lock_guard lock(holder_mutex_);
	holder_ = std::move(who);
	holder_is_us_ = us;
}

backstore_status rbd_backstore::status() const
{
	backstore_status s;
	const rbd_lock_state st = lock_state();
	s.state = st == rbd_lock_state::unshared ? "serving" : to_string(st);
	if (exclusive_lock_) {
		std::lock_guard lock(holder_mutex_);
		s.lock_owner = holder_;
		s.lock_owner_is_us = holder_is_us_ && st == rbd_lock_state::owner;
	}
	s.reopens = reopens();
	return s;
}

uint64_t rbd_backstore::instance_id() const
{
	std::lock_guard lock(session_mutex_);
	return session_ ? session_->instance_id() : 0;
}

void rbd_backstore::add_probe(rbd_queue_probe *probe)
{
	std::lock_guard lock(probes_mutex_);
	probes_.push_back(probe);
}

void rbd_backstore::remove_probe(rbd_queue_probe *probe)
{
	std::lock_guard lock(probes_mutex_);
	std::erase(probes_, probe);
}

rbd_backstore::~rbd_backstore()
{
	{
		std::lock_guard lock(keeper_mutex_);
		stop_ = true;
	}
	keeper_cv_.notify_all();
	if (keeper_.joinable())
		keeper_.join();
}

std::string rbd_backstore::lock_owners() const
{
	std::string who;
	if (int r = image_lock_holder(session_->image(), who); r < 0)
		return std::string("unknown (") + strerror(-r) + ")";
	return who.empty() ? "nobody" : who;
}

// At open, on the control thread. Only an unowned lock is acquired here
// (milliseconds). An owned one goes to the keeper thread: librbd answers a
// live owner's refusal at once, but waits for a dead owner (a gateway
// killed by SIGKILL) until the OSD drops its watch, about 30 s, and device
// creation (netlink, targetcli, a restarting daemon's other devices) must
// not wait that long.
void rbd_backstore::start_lock(bool exclusive_lock_feature)
{
	if (options_.handle_per_queue) {
		log_warn(log_prefix_, "one image handle per queue: the exclusive lock is not taken");
		return;
	}
	exclusive_lock_ = exclusive_lock_feature;
	if (!exclusive_lock_feature) {
		log_warn(log_prefix_, "image %s has no exclusive-lock feature: nothing stops "
			 "another gateway from writing it at the same time (rbd feature "
			 "enable %s exclusive-lock)", target_.c_str(), target_.c_str());
		// The keeper still reopens after a blocklist.
		keeper_ = std::thread([this] { lock_keeper(); });
		return;
	}
	lock_attempt got = take_lock(options_.standby_grace);
	state_.store(got.state, std::memory_order_seq_cst);
	if (got.state != rbd_lock_state::owner)
		log_warn(log_prefix_, "exclusive lock on %s not acquired (%s; held by %s): writes "
			 "are BUSY for %lld s, then DATA PROTECT, until it is ours; retrying "
			 "every %lld ms", target_.c_str(), strerror(-got.error), got.holder.c_str(),
			 (long long)std::chrono::duration_cast<std::chrono::seconds>(
				 options_.standby_grace).count(),
			 (long long)options_.lock_poll.count());
	keeper_ = std::thread([this] { lock_keeper(); });
}

// The lock as at open: acquired if nobody holds it, else standby with
// writes BUSY for `grace`. librbd's -errno says why it was not ours.
rbd_backstore::lock_attempt rbd_backstore::take_lock(std::chrono::milliseconds grace)
{
	lock_attempt a{rbd_lock_state::owner, 0, lock_owners()};
	a.error = a.holder == "nobody" ? rbd_lock_acquire(session_->image(), RBD_LOCK_MODE_EXCLUSIVE)
				       : -EBUSY;
	if (a.error == 0) {
		// Named as the other gateways see us.
		note_holder(lock_owners(), true);
		return a;
	}
	if (a.error != -EBUSY)
		a.holder = lock_owners();
	note_holder(a.holder, false);
	busy_until_ = std::chrono::steady_clock::now() + grace;
	a.state = a.error == -ESHUTDOWN ? rbd_lock_state::fenced : rbd_lock_state::standby;
	return a;
}

void rbd_backstore::set_state(rbd_lock_state from, rbd_lock_state to, const std::string &why)
{
	rbd_lock_state expected = from;
	// seq_cst: the fence must be visible before reopen() looks at the
	// queues' windows (see rbd_backstore.h).
	if (!state_.compare_exchange_strong(expected, to, std::memory_order_seq_cst))
		return;  // someone else saw it first and logged
	if (from == rbd_lock_state::owner) {
		start_holdoff();  // bounds how often the lock can move (ALUA)
		lock_lost_.fetch_add(1, std::memory_order_relaxed);
	}
	if (to == rbd_lock_state::owner) {
		log_info(log_prefix_, "exclusive lock on %s acquired: writes go through", target_.c_str());
	} else if (to == rbd_lock_state::lost) {
		log_error(log_prefix_, "LOST the exclusive lock on %s (%s): writes now fail with DATA "
			  "PROTECT, WRITE PROTECTED; reads still work; reopen the device to "
			  "take the lock back", target_.c_str(), why.c_str());
	} else if (to == rbd_lock_state::fenced) {
		log_error(log_prefix_, "FENCED off %s: the cluster blocklisted this client (%s), "
			  "most likely because another gateway broke its lock; commands fail with "
			  "NOT READY, BECOMING READY (retryable) while the image is reopened with a "
			  "new client", target_.c_str(), why.c_str());
	}
}

void rbd_backstore::lock_keeper()
{
	register_gateway_now();
	while (failover_wait(options_.lock_poll)) {
		publish_gateway_status(false);
		rbd_lock_state st = lock_state();
		if (takeover_wanted_.exchange(false, std::memory_order_acq_rel) &&
		    (st == rbd_lock_state::standby || st == rbd_lock_state::lost)) {
			take_over(st);
			continue;
		}
		if (st == rbd_lock_state::owner && tag_dirty_.exchange(false, std::memory_order_acq_rel))
			write_lock_tag();
		if (st == rbd_lock_state::fenced) {
			reopen();
		} else if (st == rbd_lock_state::standby) {
			int r = rbd_lock_acquire(session_->image(), RBD_LOCK_MODE_EXCLUSIVE);
			if (r == 0) {
				note_holder(lock_owners(), true);
				set_state(st, rbd_lock_state::owner, "");
				write_lock_tag();
			} else if (r == -ESHUTDOWN) {
				set_state(st, rbd_lock_state::fenced, "lock acquire: blocklisted");
			} else {
				std::string who = lock_owners();
				note_holder(who, false);
				read_lock_tag(who);
			}
		} else if (st == rbd_lock_state::owner || st == rbd_lock_state::lost) {
			int owner = 0;
			int r = rbd_is_exclusive_lock_owner(session_->image(), &owner);
			if (r == -ESHUTDOWN)
				set_state(st, rbd_lock_state::fenced, "lock check: blocklisted");
			else if (r == 0 && !owner && blocklisted())
				// A broken lock (rbd lock rm, another gateway's
				// failover) blocklists its owner: reopen rather
				// than stay write-protected for good.
				set_state(st, rbd_lock_state::fenced, "lock broken, client blocklisted");
			else if (r == 0 && !owner) {
				// Lost: who has it now (it may move on).
				std::string who = lock_owners();
				note_holder(who, false);
				read_lock_tag(who);
				if (st == rbd_lock_state::owner)
					set_state(st, rbd_lock_state::lost, "now held by " + who);
			}
		}
	}
}

// Keeper thread: false once the backstore is closing.
bool rbd_backstore::keeper_sleep(std::chrono::milliseconds d)
{
	std::unique_lock lock(keeper_mutex_);
	keeper_cv_.wait_for(lock, d, [this] { return stop_; });
	return !stop_;
}

// Whether the cluster refuses this client: one 512-byte read, which a
// blocklisted client's OSD answers with EBLOCKLISTED (ESHUTDOWN).
bool rbd_backstore::blocklisted()
{
	char block[512];
	return rbd_read(session_->image(), 0, sizeof(block), block) == -ESHUTDOWN;
}

// Keeper thread, fenced: until no queue can touch the old session. False
// if the backstore closes meanwhile.
bool rbd_backstore::wait_quiet()
{
	auto start = std::chrono::steady_clock::now();
	bool warned = false;
	std::lock_guard lock(probes_mutex_);
	for (rbd_queue_probe *p : probes_) {
		while (p->in_submit.load(std::memory_order_seq_cst) ||
		       p->in_flight.load(std::memory_order_acquire) != 0) {
			if (!keeper_sleep(std::chrono::milliseconds(10)))
				return false;
			if (!warned && std::chrono::steady_clock::now() - start > std::chrono::seconds(
					       rcfg_.osd_op_timeout ? rcfg_.osd_op_timeout
								    : rbd_default_osd_op_timeout)) {
				log_warn(log_prefix_, "reopen of %s waits for requests the "
					 "blocklisted client still has in librbd", target_.c_str());
				warned = true;
			}
		}
	}
	return true;
}

// Keeper thread, fenced and quiet: writes librbd's cache acknowledged and
// had not flushed cannot reach the OSDs from a blocklisted client; they
// are gone. Whatever a queue's handle acknowledged since its last flush
// counts (some may have been written back meanwhile: reporting a loss
// that did not happen costs one failed SYNCHRONIZE CACHE; missing one
// would tell the initiator its data is safe).
void rbd_backstore::note_dropped_writes()
{
	uint64_t dropped = 0;
	{
		std::lock_guard lock(probes_mutex_);
		for (rbd_queue_probe *p : probes_)
			dropped += p->unflushed.exchange(0, std::memory_order_acq_rel);
	}
	if (dropped == 0)
		return;
	lost_writes_.store(true, std::memory_order_release);
	log_error(log_prefix_, "%llu writes acknowledged from librbd's cache since the last flush "
		  "may be lost with the fenced client: the next SYNCHRONIZE CACHE fails",
		  (unsigned long long)dropped);
}

// Keeper thread, fenced: a fresh client and image handle, with bounded
// backoff between attempts; then the lock as at open, without the grace.
void rbd_backstore::reopen()
{
	auto fenced_at = std::chrono::steady_clock::now();
	uint64_t old_id = session_ ? session_->instance_id() : 0;
	// The address the breaker blocklisted: ours, as the lock named us.
	std::string old_address;
	{
		std::lock_guard lock(holder_mutex_);
		if (holder_is_us_)
			old_address = holder_;
	}
	if (!wait_quiet())
		return;
	note_dropped_writes();
	{
		// Nothing uses it now: the queues see fenced and their
		// requests on it are released.
		std::lock_guard lock(session_mutex_);
		session_.reset();
	}
	auto delay = options_.reopen_backoff;
	for (unsigned attempt = 1;; attempt++) {
		if (!keeper_sleep(delay))
			return;
		auto opened = open_sized_session(rcfg_);
		if (!opened) {
			delay = std::min(2 * delay, options_.reopen_backoff_max);
			log_warn(log_prefix_, "reopen of %s, attempt %u, failed: %s; next in %lld ms",
				 target_.c_str(), attempt, opened.error().what().c_str(),
				 (long long)delay.count());
			continue;
		}
		std::unique_ptr<rbd_session> fresh = std::move(opened->session);
		const uint64_t size = opened->size;
		if (size != size_bytes())
			log_warn(log_prefix_, "%s is now %" PRIu64 " bytes, the device %" PRIu64
				 "; I/O stays within the device", target_.c_str(), size,
				 size_bytes());
		{
			std::lock_guard lock(session_mutex_);
			session_ = std::move(fresh);
			live_.store(session_.get(), std::memory_order_release);
		}
		// Someone alive broke our lock: if they still hold it, DATA
		// PROTECT at once, no BUSY grace.
		lock_attempt got = exclusive_lock_ ? take_lock(std::chrono::milliseconds(0))
						   : lock_attempt{rbd_lock_state::unshared, 0, {}};
		const rbd_lock_state st = got.state;
		reopens_.fetch_add(1, std::memory_order_acq_rel);
		auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
				  std::chrono::steady_clock::now() - fenced_at).count();
		log_info(log_prefix_, "reopened %s as client.%" PRIu64 " (was client.%" PRIu64
			 ") after %u attempt(s), %lld ms fenced; exclusive lock: %s%s%s",
			 target_.c_str(), session_->instance_id(), old_id, attempt, (long long)ms,
			 to_string(st), st == rbd_lock_state::owner ? "" : ", held by ",
			 st == rbd_lock_state::owner ? "" : got.holder.c_str());
		// Published last: the queues submit again from here on.
		state_.store(st, std::memory_order_seq_cst);
		remove_stale_blocklist_entry(old_address);
		register_gateway_now();
		return;
	}
}

int rbd_backstore::write_gate() const
{
	switch (lock_state()) {
	case rbd_lock_state::unshared:
	case rbd_lock_state::owner:
		return 0;
	case rbd_lock_state::standby:
	case rbd_lock_state::lost:
		if (implicit_failover_.load(std::memory_order_acquire)) {
			// The initiator sent a write here: its path choice.
			// BUSY until the keeper has the lock (or, within the
			// holdoff after losing it, until the holdoff ends).
			if (!in_holdoff())
				request_takeover();
			return -EBUSY;
		}
		if (lock_state() == rbd_lock_state::lost)
			return -EROFS;
		return std::chrono::steady_clock::now() < busy_until_ ? -EBUSY : -EROFS;
	case rbd_lock_state::fenced:
		return -ENOTCONN;
	}
	return -EIO;
}

rbd_image_t rbd_backstore::io_image() const
{
	if (state_.load(std::memory_order_seq_cst) == rbd_lock_state::fenced)
		return nullptr;
	return live_.load(std::memory_order_acquire)->image();
}

int64_t rbd_backstore::note_result(int64_t result, bool writing)
{
	rbd_lock_state st = lock_state();
	if (result == -ESHUTDOWN) {
		if (st != rbd_lock_state::fenced)
			set_state(st, rbd_lock_state::fenced, "a request failed with EBLOCKLISTED");
		return -ENOTCONN;
	}
	if (result == -ETIMEDOUT)
		timed_out_.fetch_add(1, std::memory_order_relaxed);
	if (result == -EROFS && writing && st == rbd_lock_state::owner)
		set_state(st, rbd_lock_state::lost, "a write failed with EROFS");
	return result;
}

setup_result<void> rbd_backstore::resize(uint64_t new_size)
{
	std::lock_guard lock(session_mutex_);
	if (!session_)
		return setup_error{ENOTCONN, target_ + " is being reopened after a blocklist",
				   "retry the resize"};
	uint64_t have = 0;
	if (int r = rbd_get_size(session_->image(), &have); r < 0)
		return setup_error{-r, target_ + ": cannot read its size"};
	if (new_size < have)
		return setup_error{EINVAL,
				   "shrinking image " + target_ + " from " + std::to_string(have) +
					   " to " + std::to_string(new_size) +
					   " bytes would destroy its tail; tcmud never shrinks an image",
				   "shrink it with rbd resize --allow-shrink first, if that is meant"};
	if (new_size > have) {
		if (int r = rbd_resize(session_->image(), new_size); r < 0)
			return setup_error{-r, "rbd_resize of " + target_ + " to " +
						       std::to_string(new_size) + " bytes"};
		log_info(log_prefix_, "grew image %s from %" PRIu64 " to %" PRIu64 " bytes",
			 target_.c_str(), have, new_size);
	}
	// The image is that long before any queue may use the new bound.
	size_.store(new_size, std::memory_order_release);
	return {};
}

setup_result<std::unique_ptr<backstore_queue>> rbd_backstore::open_queue(io_engine &engine)
{
	// Shared handle: the queue asks io_image() per request (it changes
	// when the image is reopened).
	rbd_image_t image = nullptr;
	if (options_.handle_per_queue) {
		auto opened = session_->open_image();
		if (!opened)
			return opened.error();
		image = *opened;
	}
	auto q = rbd_queue::open(*this, engine, image, options_.handle_per_queue);
	if (!q)
		return q.error();
	return std::move(*q);
}

} // namespace tcmud
