// SPDX-License-Identifier: GPL-2.0-or-later
#include "range_lock.h"

#include <cassert>

namespace tcmud::scsi {

namespace {

// Each thread that takes the fast path sticks to one stripe, handed out
// round-robin, so N queue threads (N <= STRIPES) never share a counter line.
uint8_t this_thread_stripe()
{
	static std::atomic<unsigned> next_stripe{0};
	thread_local const auto stripe = static_cast<uint8_t>(
		next_stripe.fetch_add(1, std::memory_order_relaxed) % range_lock::STRIPES);
	return stripe;
}

bool overlaps(const range_lock::entry &a, const range_lock::entry &b)
{
	return a.first < b.end && b.first < a.end;
}

bool conflicts(const range_lock::entry &a, const range_lock::entry &b)
{
	return (a.exclusive || b.exclusive) && overlaps(a, b);
}

struct range_request {
	uint64_t first;
	uint64_t count;
	bool exclusive;
};

void set_range(range_lock::entry &e, const range_request &r)
{
	e.first = r.first;
	// A zero-length range still conflicts with nothing; saturate at the top.
	e.end = (UINT64_MAX - r.first < r.count) ? UINT64_MAX : r.first + r.count;
	e.exclusive = r.exclusive;
	e.wake_next = nullptr;
}

} // namespace

void range_lock::list::push_back(entry &e)
{
	e.prev = tail;
	e.next = nullptr;
	(tail ? tail->next : head) = &e;
	tail = &e;
}

void range_lock::list::remove(entry &e)
{
	(e.prev ? e.prev->next : head) = e.next;
	(e.next ? e.next->prev : tail) = e.prev;
	e.prev = e.next = nullptr;
}

bool range_lock::lock_shared(entry &e, uint64_t first, uint64_t count)
{
	assert(e.current == entry::state::idle);
	set_range(e, {.first = first, .count = count, .exclusive = false});
	e.stripe = this_thread_stripe();
	std::atomic<uint64_t> &mine = fast_[e.stripe].in_flight;
	mine.fetch_add(1, std::memory_order_seq_cst);
	if (exclusive_users_.load(std::memory_order_seq_cst) == 0) {
		e.current = entry::state::fast;
		return true;
	}
	// An exclusive entry exists (or is arriving): back out of the fast
	// counter and register the range. lock_slow() re-runs the grant, which
	// covers an exclusive waiter that saw our transient increment.
	mine.fetch_sub(1, std::memory_order_seq_cst);
	return lock_slow(e);
}

bool range_lock::lock_exclusive(entry &e, uint64_t first, uint64_t count)
{
	assert(e.current == entry::state::idle);
	set_range(e, {.first = first, .count = count, .exclusive = true});
	// Announce first, then look at the fast counters (in can_grant): the
	// mirror image of lock_shared's increment-then-load.
	exclusive_users_.fetch_add(1, std::memory_order_seq_cst);
	return lock_slow(e);
}

bool range_lock::lock_slow(entry &e)
{
	entry *to_wake;
	bool granted;
	{
		std::lock_guard guard(mutex_);
		e.current = entry::state::waiting;
		waiters_.push_back(e);
		to_wake = grant_waiters(&e);
		granted = e.current == entry::state::held;
	}
	wake_all(to_wake);
	return granted;
}

void range_lock::unlock(entry &e)
{
	if (e.current == entry::state::fast) {
		e.current = entry::state::idle;
		fast_[e.stripe].in_flight.fetch_sub(1, std::memory_order_seq_cst);
		if (exclusive_users_.load(std::memory_order_seq_cst) == 0)
			return;
		// An exclusive entry may be waiting for this stripe to drain.
	}
	entry *to_wake;
	{
		std::lock_guard guard(mutex_);
		if (e.current == entry::state::held) {
			holders_.remove(e);
			if (e.exclusive)
				exclusive_users_.fetch_sub(1, std::memory_order_seq_cst);
			e.current = entry::state::idle;
		}
		to_wake = grant_waiters(nullptr);
	}
	wake_all(to_wake);
}

bool range_lock::fast_drained() const
{
	for (const stripe_counter &s : fast_)
		if (s.in_flight.load(std::memory_order_seq_cst) != 0)
			return false;
	return true;
}

bool range_lock::can_grant(const entry &e) const
{
	for (const entry *h = holders_.head; h; h = h->next)
		if (conflicts(e, *h))
			return false;
	for (const entry *w = waiters_.head; w != &e; w = w->next)
		if (conflicts(e, *w))
			return false;
	return !e.exclusive || fast_drained();
}

// Called with mutex_ held. Moves every grantable waiter to holders_ and
// returns the chain of those to wake, leaving out `self` (whose lock call
// returns true instead).
range_lock::entry *range_lock::grant_waiters(entry *self)
{
	entry *chain = nullptr;
	entry *w = waiters_.head;
	while (w) {
		entry *next = w->next;
		if (can_grant(*w)) {
			waiters_.remove(*w);
			holders_.push_back(*w);
			w->current = entry::state::held;
			if (w != self) {
				w->wake_next = chain;
				chain = w;
			}
		}
		w = next;
	}
	return chain;
}

void range_lock::wake_all(entry *chain)
{
	while (chain) {
		// Read the link first: the callback may let the entry be reused.
		entry *next = chain->wake_next;
		chain->granted(*chain);
		chain = next;
	}
}

} // namespace tcmud::scsi
