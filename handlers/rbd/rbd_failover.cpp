// SPDX-License-Identifier: GPL-2.0-or-later
// ALUA between gateways of one image: the lock tag that says which target
// port group holds the exclusive lock, and the implicit takeover a write
// at a gateway without the lock starts (rbd_backstore.h, docs/rbd.md).
#include <cerrno>
#include <charconv>
#include <cstring>

#include "log/log.h"
#include "rbd/rbd_backstore.h"

namespace tcmud {

namespace {

// tcmu-runner's key and format ("tcmu_tag=%hu,rbd_client=%s"), so that
// tcmud and tcmu-runner gateways of one image read each other's tag while
// an installation moves from one to the other. The client part names the
// lock holder as rbd_lock_get_owners does: a tag whose holder no longer
// holds the lock (a gateway that died between taking it and writing the
// tag, or one taken over since) is stale and ignored.
constexpr const char *LOCK_TAG_KEY = "tcmu_rbd_locker_tag";

int64_t steady_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

// The group of a tag that names `holder`, or -1.
int32_t tag_group(std::string_view tag, std::string_view holder)
{
	constexpr std::string_view head = "tcmu_tag=", client = ",rbd_client=";
	if (!tag.starts_with(head))
		return -1;
	std::size_t comma = tag.find(client);
	if (comma == std::string_view::npos || tag.substr(comma + client.size()) != holder)
		return -1;
	uint16_t group = 0;
	const char *first = tag.data() + head.size(), *last = tag.data() + comma;
	auto [end, ec] = std::from_chars(first, last, group);
	if (ec != std::errc() || end != last || group == 0)
		return -1;
	return group;
}

} // namespace

std::optional<uint16_t> rbd_backstore::owner_port_group() const
{
	int32_t g = lock_state() == rbd_lock_state::owner ? local_group_.load(std::memory_order_acquire)
							   : owner_group_.load(std::memory_order_acquire);
	if (g < 0)
		return std::nullopt;
	return static_cast<uint16_t>(g);
}

void rbd_backstore::set_local_port_group(std::optional<uint16_t> group, bool implicit_failover)
{
	implicit_failover_.store(implicit_failover && exclusive_lock_, std::memory_order_release);
	const int32_t g = group ? *group : -1;
	if (local_group_.exchange(g, std::memory_order_acq_rel) != g && g >= 0) {
		// Ours and not yet recorded: the keeper writes the tag at
		// its next poll.
		tag_dirty_.store(true, std::memory_order_release);
	}
}

// Queue thread, from write_gate(): a write reached this gateway without
// the lock; the keeper takes it over.
void rbd_backstore::request_takeover() const
{
	if (!takeover_wanted_.exchange(true, std::memory_order_acq_rel))
		keeper_cv_.notify_one();
}

// The keeper's sleep between polls: also ends when a takeover is asked
// for. (A tag due is written at the next poll: a failing write must not
// turn this into a busy loop against the cluster.)
bool rbd_backstore::failover_wait(std::chrono::milliseconds d)
{
	std::unique_lock lock(keeper_mutex_);
	keeper_cv_.wait_for(lock, d, [this] {
		return stop_ || takeover_wanted_.load(std::memory_order_acquire);
	});
	return !stop_;
}

void rbd_backstore::start_holdoff()
{
	holdoff_until_ns_.store(steady_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(
						      options_.takeover_holdoff)
						      .count(),
				std::memory_order_release);
}

// Any thread (write_gate, the keeper): whether this gateway lost the lock
// too recently to take it over.
bool rbd_backstore::in_holdoff() const
{
	return steady_ns() < holdoff_until_ns_.load(std::memory_order_acquire);
}

// Keeper thread, owner: records our group with the lock.
void rbd_backstore::write_lock_tag()
{
	const int32_t group = local_group_.load(std::memory_order_acquire);
	if (group < 0)
		return;
	std::string holder;
	if (int r = image_lock_holder(session_->image(), holder); r < 0 || holder.empty()) {
		tag_dirty_.store(true, std::memory_order_release);
		return;  // retried at the next poll
	}
	const std::string tag = "tcmu_tag=" + std::to_string(group) + ",rbd_client=" + holder;
	if (int r = rbd_metadata_set(session_->image(), LOCK_TAG_KEY, tag.c_str()); r < 0) {
		log_warn(log_prefix_, "cannot record target port group %d with the lock on %s "
			 "(%s): other gateways report no group active/optimized until it is",
			 group, target_.c_str(), strerror(-r));
		tag_dirty_.store(true, std::memory_order_release);
		return;
	}
	owner_group_.store(group, std::memory_order_release);
}

// Keeper thread, standby or lost: the owner's group, for REPORT TARGET
// PORT GROUPS. Read again when the holder changes, or while the tag does
// not name the holder yet (it writes it just after taking the lock).
void rbd_backstore::read_lock_tag(const std::string &holder)
{
	if (holder == tag_holder_ && owner_group_.load(std::memory_order_acquire) >= 0)
		return;
	tag_holder_ = holder;
	char buf[256] = {};
	size_t len = sizeof(buf) - 1;
	int r = rbd_metadata_get(session_->image(), LOCK_TAG_KEY, buf, &len);
	owner_group_.store(r < 0 ? -1 : tag_group(std::string_view(buf, strnlen(buf, sizeof(buf))),
						 holder),
			   std::memory_order_release);
}

// Keeper thread: a write arrived here without the lock and ALUA is
// implicit. Break the holder's lock (librbd blocklists it, so it can write
// nothing more) and take it; never while this gateway's holdoff runs.
void rbd_backstore::take_over(rbd_lock_state from)
{
	if (in_holdoff())
		return;
	rbd_image_t image = session_->image();
	std::string holder;
	int r = image_lock_holder(image, holder);
	if (r == 0 && !holder.empty())
		r = rbd_lock_break(image, RBD_LOCK_MODE_EXCLUSIVE, holder.c_str());
	if (r == 0 || r == -ENOENT)
		r = rbd_lock_acquire(image, RBD_LOCK_MODE_EXCLUSIVE);
	if (r == -ESHUTDOWN) {  // EBLOCKLISTED
		set_state(from, rbd_lock_state::fenced, "lock takeover: blocklisted");
		return;
	}
	if (r < 0) {
		log_warn(log_prefix_, "implicit ALUA failover: cannot take the exclusive lock on %s "
			 "over from %s: %s; writes stay BUSY and the next one tries again",
			 target_.c_str(), holder.empty() ? "nobody" : holder.c_str(), strerror(-r));
		return;
	}
	std::string now;
	image_lock_holder(image, now);
	note_holder(now, true);
	takeovers_.fetch_add(1, std::memory_order_acq_rel);
	log_warn(log_prefix_, "implicit ALUA failover: took the exclusive lock on %s over from %s "
		 "(blocklisted) because a write reached target port group %d, which did not hold it",
		 target_.c_str(), holder.empty() ? "nobody" : holder.c_str(),
		 local_group_.load(std::memory_order_acquire));
	set_state(from, rbd_lock_state::owner, "");
	write_lock_tag();
}

// Keeper thread, after a reopen: the fenced client is gone (its session
// closed once no queue used it), so its blocklist entry protects nothing
// any more. Removed with the new client's credentials. profile rbd may add
// entries (breaking a lock needs it) but not remove them: the user needs
// mon 'profile rbd, allow command "osd blocklist"' (docs/rbd.md); without
// it the refusal is logged and the entry expires by itself.
void rbd_backstore::remove_stale_blocklist_entry(const std::string &address)
{
	if (address.empty() || address.find_first_of("\"\\") != std::string::npos)
		return;
	const std::string cmd =
		R"({"prefix": "osd blocklist", "blocklistop": "rm", "addr": ")" + address + R"("})";
	const char *cmds[] = {cmd.c_str()};
	char *out = nullptr, *status = nullptr;
	size_t out_len = 0, status_len = 0;
	int r = rados_mon_command(session_->cluster(), cmds, 1, "", 0, &out, &out_len, &status,
				  &status_len);
	std::string why = status ? std::string(status, status_len) : std::string();
	rados_buffer_free(out);
	rados_buffer_free(status);
	if (r < 0)
		log_warn(log_prefix_, "cannot remove the fenced client's blocklist entry %s (%s%s%s); "
			 "it expires by itself", address.c_str(), strerror(-r), why.empty() ? "" : ": ",
			 why.c_str());
	else
		log_info(log_prefix_, "removed the fenced client's blocklist entry %s", address.c_str());
}

void rbd_backstore::register_gateway_now()
{
	if (options_.handle_per_queue)
		return;
	if (int r = register_gateway(session_->cluster(), session_->image(), rcfg_); r < 0) {
		if (!warned_service_map_)
			log_warn(log_prefix_, "not registered in the cluster's service map (%s): "
				 "gwcli and the dashboard will not list this gateway for %s",
				 strerror(-r), target_.c_str());
		warned_service_map_ = true;
		return;
	}
	publish_gateway_status(true);
}

void rbd_backstore::publish_gateway_status(bool force)
{
	if (options_.handle_per_queue || !session_)
		return;
	gateway_status now;
	now.lock_owner = lock_state() == rbd_lock_state::owner;
	now.lock_lost = lock_lost_.load(std::memory_order_relaxed);
	now.conn_lost = reopens();
	now.timed_out = timed_out_.load(std::memory_order_relaxed);
	if (!force && now.lock_owner == published_.lock_owner && now.lock_lost == published_.lock_lost &&
	    now.conn_lost == published_.conn_lost && now.timed_out == published_.timed_out)
		return;
	if (update_gateway_status(session_->cluster(), now) == 0)
		published_ = now;
}

} // namespace tcmud
