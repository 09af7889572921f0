// SPDX-License-Identifier: GPL-2.0-or-later
// range_lock on its own: the fast path, parking, waking and ordering.
#include <catch2/catch.hpp>

#include "range_lock.h"

using namespace tcmud::scsi;

namespace {

struct waiter : range_lock::entry {
	int woken = 0;
	waiter()
	{
		context = this;
		granted = [](range_lock::entry &e) { static_cast<waiter *>(e.context)->woken++; };
	}
};

} // namespace

TEST_CASE("shared locks take the fast path while no exclusive entry exists", "[range_lock]")
{
	range_lock lock;
	waiter a, b;
	REQUIRE(lock.lock_shared(a, 0, 8));
	REQUIRE(lock.lock_shared(b, 4, 8));
	CHECK(a.current == range_lock::entry::state::fast);
	lock.unlock(a);
	lock.unlock(b);
	CHECK(a.current == range_lock::entry::state::idle);
}

TEST_CASE("an exclusive lock waits for fast shared holders to drain", "[range_lock]")
{
	range_lock lock;
	waiter w, x;
	REQUIRE(lock.lock_shared(w, 100, 1));  // even one far away: its range is unknown
	CHECK_FALSE(lock.lock_exclusive(x, 0, 1));
	CHECK(x.woken == 0);
	lock.unlock(w);
	CHECK(x.woken == 1);
	CHECK(x.current == range_lock::entry::state::held);
	lock.unlock(x);
	CHECK(lock.exclusive_users() == 0);
}

TEST_CASE("an overlapping shared lock parks behind an exclusive holder", "[range_lock]")
{
	range_lock lock;
	waiter x, w;
	REQUIRE(lock.lock_exclusive(x, 10, 4));
	CHECK_FALSE(lock.lock_shared(w, 13, 2));
	lock.unlock(x);
	CHECK(w.woken == 1);
	lock.unlock(w);
	CHECK(w.current == range_lock::entry::state::idle);
}

TEST_CASE("a disjoint shared lock is granted while an exclusive lock is held", "[range_lock]")
{
	range_lock lock;
	waiter x, w;
	REQUIRE(lock.lock_exclusive(x, 10, 4));
	REQUIRE(lock.lock_shared(w, 14, 2));
	CHECK(w.current == range_lock::entry::state::held);  // slow path: listed
	lock.unlock(w);
	lock.unlock(x);
}

TEST_CASE("an exclusive lock waits for an overlapping slow shared holder", "[range_lock]")
{
	range_lock lock;
	waiter x1, w, x2;
	REQUIRE(lock.lock_exclusive(x1, 0, 1));
	REQUIRE(lock.lock_shared(w, 5, 5));
	CHECK_FALSE(lock.lock_exclusive(x2, 9, 1));
	lock.unlock(x1);
	CHECK(x2.woken == 0);
	lock.unlock(w);
	CHECK(x2.woken == 1);
	lock.unlock(x2);
}

TEST_CASE("waiters on overlapping ranges are granted in arrival order", "[range_lock]")
{
	range_lock lock;
	waiter x1, x2, w;
	REQUIRE(lock.lock_exclusive(x1, 0, 4));
	CHECK_FALSE(lock.lock_exclusive(x2, 2, 4));
	// w overlaps x2 only; x2 came first, so w must not overtake it.
	CHECK_FALSE(lock.lock_shared(w, 5, 1));
	lock.unlock(x1);
	CHECK(x2.woken == 1);
	CHECK(w.woken == 0);
	lock.unlock(x2);
	CHECK(w.woken == 1);
	lock.unlock(w);
	CHECK(lock.exclusive_users() == 0);
}

TEST_CASE("shared locks go back to the fast path after the last exclusive", "[range_lock]")
{
	range_lock lock;
	waiter x, w;
	REQUIRE(lock.lock_exclusive(x, 0, 1));
	lock.unlock(x);
	REQUIRE(lock.lock_shared(w, 0, 1));
	CHECK(w.current == range_lock::entry::state::fast);
	lock.unlock(w);
}
