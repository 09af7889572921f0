// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/reset_barrier.h"

#include <cerrno>

namespace tcmud {

reset_barrier::reset_barrier(std::function<int()> reset) : reset_(std::move(reset)) {}

size_t reset_barrier::join(std::function<void()> poke)
{
	std::lock_guard lock(mutex_);
	members_.push_back(member{std::move(poke), true, false, epoch_});
	return members_.size() - 1;
}

void reset_barrier::leave(size_t id)
{
	std::unique_lock lock(mutex_);
	members_[id].active = false;
	members_[id].arrived = false;
	// The others may all have arrived and waited only for this one.
	poke_others(id, lock);
}

void reset_barrier::request()
{
	std::unique_lock lock(mutex_);
	if (pending_.load(std::memory_order_relaxed))
		return;
	pending_.store(true, std::memory_order_release);
	poke_others(members_.size(), lock);
}

std::optional<int> reset_barrier::arrive(size_t id)
{
	std::unique_lock lock(mutex_);
	member &me = members_[id];
	if (me.arrived && me.ticket != epoch_) {
		// The reset this member waited for was done by another.
		me.arrived = false;
		return result_;
	}
	if (!pending_.load(std::memory_order_relaxed))
		return 0;
	if (!me.arrived) {
		me.arrived = true;
		me.ticket = epoch_;
	}
	for (const member &m : members_)
		if (m.active && !m.arrived)
			return std::nullopt;
	// The last one: nothing of any queue is in flight or being fetched.
	// The configfs writes run under the lock; a queue asking for another
	// reset meanwhile waits for them, which is what it wants anyway.
	result_ = reset_ ? reset_() : -EOPNOTSUPP;
	++epoch_;
	pending_.store(false, std::memory_order_release);
	me.arrived = false;
	poke_others(id, lock);
	return result_;
}

// Pokes run outside the lock: a poke takes the worker's own lock, and a
// worker may hold that while it calls in here.
void reset_barrier::poke_others(size_t id, std::unique_lock<std::mutex> &held)
{
	std::vector<std::function<void()>> pokes;
	for (size_t i = 0; i < members_.size(); ++i)
		if (i != id && members_[i].active && members_[i].poke)
			pokes.push_back(members_[i].poke);
	held.unlock();
	for (auto &p : pokes)
		p();
}

} // namespace tcmud
