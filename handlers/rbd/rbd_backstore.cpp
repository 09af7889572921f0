// SPDX-License-Identifier: GPL-2.0-or-later
#include "rbd/rbd_backstore.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "log/log.h"
#include "rbd/rbd_queue.h"

namespace tcmud {

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

std::unique_ptr<backstore> rbd_backstore::open(const backstore_config &cfg, int *error,
					       std::string *reason)
{
	return open_with(cfg, rbd_open_options{}, error, reason);
}

std::unique_ptr<rbd_backstore> rbd_backstore::open_with(const backstore_config &cfg,
							const rbd_open_options &options,
							int *error, std::string *reason)
{
	auto refuse = [&](int err, std::string why) -> std::unique_ptr<rbd_backstore> {
		*error = err;
		*reason = std::move(why);
		return nullptr;
	};
	rbd_config rcfg;
	if (std::string why = parse_rbd_config(cfg.cfgstring, &rcfg); !why.empty())
		return refuse(-EINVAL, why);
	if (cfg.dev_size == 0 || cfg.block_size == 0)
		return refuse(-EINVAL, "device size or block size is 0");
	auto session = rbd_session::open(rcfg, error, reason);
	if (!session)
		return refuse(*error, *reason);
	const std::string target = rcfg.pool + "/" + rcfg.image;

	uint64_t image_size = 0;
	if (int r = rbd_get_size(session->image(), &image_size); r < 0)
		return refuse(r, target + ": cannot read its size: " + strerror(-r));
	// Like tcmu-runner: the LUN is the image, byte for byte. A larger
	// image would hide data; a smaller one cannot be served.
	if (image_size != cfg.dev_size)
		return refuse(-EINVAL, "image " + target + " is " + std::to_string(image_size) +
					       " bytes but the device size is " +
					       std::to_string(cfg.dev_size) +
					       "; make them equal (rbd resize, or the device's dev_size)");
	rbd_image_info_t info{};
	if (int r = rbd_stat(session->image(), &info, sizeof(info)); r < 0)
		return refuse(r, target + ": rbd_stat: " + strerror(-r));
	uint64_t features = 0;
	if (int r = rbd_get_features(session->image(), &features); r < 0)
		return refuse(r, target + ": cannot read its features: " + strerror(-r));
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
		 "librbd cache %s; exclusive lock: %s",
		 target.c_str(), image_size, info.obj_size, store->session_->who().c_str(),
		 store->cache_enabled() ? "ON (writes are acknowledged before the OSDs "
					  "have them; FUA and SYNCHRONIZE CACHE flush)"
					: "off",
		 to_string(store->lock_state()));
	return store;
}

rbd_backstore::rbd_backstore(std::unique_ptr<rbd_session> session, const rbd_config &rcfg,
			     const backstore_config &cfg, const rbd_open_options &options,
			     uint64_t size, backstore_caps caps)
	: session_(std::move(session)), target_(rcfg.pool + "/" + rcfg.image),
	  log_prefix_(cfg.log_prefix), options_(options), size_(size), caps_(caps)
{
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
	rbd_lock_mode_t mode;
	char *owners[4] = {};
	size_t count = 4;
	int r = rbd_lock_get_owners(session_->image(), &mode, owners, &count);
	if (r < 0 || count == 0)
		return r == -ENOENT || count == 0 ? "nobody" : std::string("unknown (") + strerror(-r) + ")";
	std::string who = owners[0];
	rbd_lock_get_owners_cleanup(owners, count);
	return who;
}

// At open, on the control thread. Only an unowned lock is acquired here
// (milliseconds). An owned one goes to the keeper thread: librbd answers a
// live owner's refusal at once, but waits for a dead owner (a gateway
// killed by SIGKILL) until the OSD drops its watch, about 30 s, and device
// creation (netlink, targetcli, a restarting daemon's other devices) must
// not wait that long.
void rbd_backstore::start_lock(bool exclusive_lock_feature)
{
	if (!exclusive_lock_feature) {
		log_warn(log_prefix_, "image %s has no exclusive-lock feature: nothing stops "
			 "another gateway from writing it at the same time (rbd feature "
			 "enable %s exclusive-lock)", target_.c_str(), target_.c_str());
		return;
	}
	if (options_.handle_per_queue) {
		log_warn(log_prefix_, "one image handle per queue: the exclusive lock is not taken");
		return;
	}
	std::string holder = lock_owners();
	int r = holder == "nobody" ? rbd_lock_acquire(session_->image(), RBD_LOCK_MODE_EXCLUSIVE)
				   : -EBUSY;
	if (r == 0) {
		state_.store(rbd_lock_state::owner, std::memory_order_release);
	} else {
		busy_until_ = std::chrono::steady_clock::now() + options_.standby_grace;
		state_.store(r == -ESHUTDOWN ? rbd_lock_state::fenced : rbd_lock_state::standby,
			     std::memory_order_release);
		log_warn(log_prefix_, "exclusive lock on %s not acquired (%s; held by %s): writes "
			 "are BUSY for %lld s, then DATA PROTECT, until it is ours; retrying "
			 "every %lld ms", target_.c_str(), strerror(-r),
			 (r == -EBUSY ? holder : lock_owners()).c_str(),
			 (long long)std::chrono::duration_cast<std::chrono::seconds>(
				 options_.standby_grace).count(),
			 (long long)options_.lock_poll.count());
	}
	keeper_ = std::thread([this] { lock_keeper(); });
}

void rbd_backstore::set_state(rbd_lock_state from, rbd_lock_state to, const std::string &why)
{
	rbd_lock_state expected = from;
	if (!state_.compare_exchange_strong(expected, to, std::memory_order_acq_rel))
		return;  // someone else saw it first and logged
	if (to == rbd_lock_state::owner) {
		log_info(log_prefix_, "exclusive lock on %s acquired: writes go through", target_.c_str());
	} else if (to == rbd_lock_state::lost) {
		log_error(log_prefix_, "LOST the exclusive lock on %s (%s): writes now fail with DATA "
			  "PROTECT, WRITE PROTECTED; reads still work; reopen the device to "
			  "take the lock back", target_.c_str(), why.c_str());
	} else if (to == rbd_lock_state::fenced) {
		log_error(log_prefix_, "FENCED off %s: the cluster blocklisted this client (%s), "
			  "most likely because another gateway broke its lock; every command now "
			  "fails with NOT READY, MANUAL INTERVENTION REQUIRED until the device is "
			  "reopened", target_.c_str(), why.c_str());
	}
}

void rbd_backstore::lock_keeper()
{
	std::unique_lock lock(keeper_mutex_);
	while (!stop_) {
		keeper_cv_.wait_for(lock, options_.lock_poll, [this] { return stop_; });
		if (stop_)
			break;
		lock.unlock();
		rbd_lock_state st = lock_state();
		if (st == rbd_lock_state::standby) {
			int r = rbd_lock_acquire(session_->image(), RBD_LOCK_MODE_EXCLUSIVE);
			if (r == 0)
				set_state(st, rbd_lock_state::owner, "");
			else if (r == -ESHUTDOWN)
				set_state(st, rbd_lock_state::fenced, "lock acquire: blocklisted");
		} else if (st == rbd_lock_state::owner) {
			int owner = 0;
			int r = rbd_is_exclusive_lock_owner(session_->image(), &owner);
			if (r == -ESHUTDOWN)
				set_state(st, rbd_lock_state::fenced, "lock check: blocklisted");
			else if (r == 0 && !owner)
				set_state(st, rbd_lock_state::lost, "now held by " + lock_owners());
		}
		lock.lock();
	}
}

int rbd_backstore::write_gate() const
{
	switch (lock_state()) {
	case rbd_lock_state::unshared:
	case rbd_lock_state::owner:
		return 0;
	case rbd_lock_state::standby:
		return std::chrono::steady_clock::now() < busy_until_ ? -EBUSY : -EROFS;
	case rbd_lock_state::lost:
		return -EROFS;
	case rbd_lock_state::fenced:
		return -ESHUTDOWN;
	}
	return -EIO;
}

void rbd_backstore::note_result(int64_t result, bool writing)
{
	rbd_lock_state st = lock_state();
	if (result == -ESHUTDOWN && st != rbd_lock_state::fenced)
		set_state(st, rbd_lock_state::fenced, "a request failed with EBLOCKLISTED");
	else if (result == -EROFS && writing && st == rbd_lock_state::owner)
		set_state(st, rbd_lock_state::lost, "a write failed with EROFS");
}

int rbd_backstore::resize(uint64_t new_size, std::string *reason)
{
	uint64_t have = 0;
	if (int r = rbd_get_size(session_->image(), &have); r < 0) {
		*reason = target_ + ": cannot read its size: " + strerror(-r);
		return r;
	}
	if (new_size < have) {
		*reason = "shrinking image " + target_ + " from " + std::to_string(have) + " to " +
			  std::to_string(new_size) +
			  " bytes would destroy its tail; tcmud never shrinks an image "
			  "(shrink it with rbd resize --allow-shrink first, if that is meant)";
		return -EINVAL;
	}
	if (new_size > have) {
		int r = rbd_resize(session_->image(), new_size);
		if (r < 0) {
			*reason = "rbd_resize of " + target_ + " to " + std::to_string(new_size) +
				  " bytes: " + strerror(-r);
			return r;
		}
		log_info(log_prefix_, "grew image %s from %" PRIu64 " to %" PRIu64 " bytes",
			 target_.c_str(), have, new_size);
	}
	// The image is that long before any queue may use the new bound.
	size_.store(new_size, std::memory_order_release);
	return 0;
}

std::unique_ptr<backend_queue> rbd_backstore::open_queue(io_engine &engine)
{
	rbd_image_t image = session_->image();
	if (options_.handle_per_queue) {
		if (int r = session_->open_image(&image); r < 0) {
			log_error(log_prefix_, "cannot open a queue's own image handle: %s",
				  strerror(-r));
			return nullptr;
		}
	}
	int error = 0;
	auto q = std::make_unique<rbd_queue>(*this, engine, image, options_.handle_per_queue,
					     &error);
	if (error < 0) {
		log_error(log_prefix_, "rbd queue: eventfd: %s", strerror(-error));
		return nullptr;
	}
	return q;
}

} // namespace tcmud
