// SPDX-License-Identifier: GPL-2.0-or-later
// ALUA between two tcmud gateways of one image (rbd_failover.cpp): the lock
// owner's target port group, recorded with the lock, is what every gateway
// reports; under implicit ALUA a write at the gateway without the lock
// takes it over, the old owner is fenced and comes back as standby, and a
// gateway that lost the lock waits takeover_holdoff before taking it back.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "rbd_test_util.h"

using namespace tcmud;
using namespace tcmud::test;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t image_size = 8 << 20;

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit)
{
	auto end = std::chrono::steady_clock::now() + limit;
	while (!pred() && std::chrono::steady_clock::now() < end)
		std::this_thread::sleep_for(50ms);
	return pred();
}

// Gateway a (target port group 1) opens first and owns the lock; b (group
// 2) is standby. Both have ALUA implicit unless a test says otherwise.
struct alua_pair {
	static rbd_open_options options(std::chrono::milliseconds holdoff)
	{
		rbd_open_options opts;
		opts.standby_grace = 1s;
		opts.lock_poll = 200ms;
		opts.reopen_backoff = 200ms;
		opts.takeover_holdoff = holdoff;
		return opts;
	}
	explicit alua_pair(std::chrono::milliseconds holdoff = 2s, bool implicit = true)
		: a(open_rbd(cfg, image_size, options(holdoff))),
		  b(open_rbd(cfg, image_size, options(holdoff)))
	{
		a.store->set_local_port_group(1, implicit);
		b.store->set_local_port_group(2, implicit);
	}
	admin_client admin;
	std::string name = admin.create(image_size);
	std::string cfg = "rbd/" + name + ";conf=" + ceph_conf();
	rbd_fixture a, b;

	std::string tag()
	{
		char buf[256] = {};
		size_t len = sizeof(buf) - 1;
		if (rbd_metadata_get(admin.open(name), "tcmu_rbd_locker_tag", buf, &len) < 0)
			return {};
		return buf;
	}
};

bool reports(const rbd_fixture &f, uint16_t group)
{
	auto g = f.store->owner_port_group();
	return g && *g == group;
}

// Writes at f until one is GOOD (BUSY and NOT READY are retried, as an
// initiator does), or the limit passes: the last result.
int64_t write_until_good(rbd_fixture &f, uint64_t off, std::vector<char> &data,
			 std::chrono::milliseconds limit)
{
	auto end = std::chrono::steady_clock::now() + limit;
	int64_t r = f.write(off, data);
	while (r != int64_t(data.size()) && (r == -EBUSY || r == -ENOTCONN) &&
	       std::chrono::steady_clock::now() < end) {
		std::this_thread::sleep_for(50ms);
		r = f.write(off, data);
	}
	return r;
}

} // namespace

TEST_CASE("rbd ALUA: every gateway reports the lock owner's target port group", "[rbd][alua]")
{
	alua_pair p;
	REQUIRE(p.a.store->lock_state() == rbd_lock_state::owner);
	REQUIRE(p.b.store->lock_state() == rbd_lock_state::standby);
	CHECK(reports(p.a, 1));
	// The owner writes the tag at its next poll; the standby reads it.
	CHECK(eventually([&] { return p.tag().starts_with("tcmu_tag=1,rbd_client="); }, 5s));
	CHECK(eventually([&] { return reports(p.b, 1); }, 5s));
	INFO("tag: " << p.tag());
}

TEST_CASE("rbd ALUA: a write at the standby gateway takes the lock over (implicit failover)",
	  "[rbd][alua]")
{
	alua_pair p(5s);
	REQUIRE(eventually([&] { return reports(p.b, 1); }, 5s));
	const std::string a_address = p.a.store->status().lock_owner;
	std::vector<char> ours = pattern(4096, 21);
	// The first write finds no lock: BUSY, while the keeper takes it.
	CHECK(p.b.write(0, ours) == -EBUSY);
	CHECK(write_until_good(p.b, 0, ours, 10s) == 4096);
	CHECK(p.b.store->lock_state() == rbd_lock_state::owner);
	CHECK(p.b.store->takeovers() == 1);
	CHECK(reports(p.b, 2));
	CHECK(eventually([&] { return p.tag().starts_with("tcmu_tag=2,rbd_client="); }, 5s));

	// The old owner was blocklisted: fenced, then reopened into standby,
	// where it reports the new owner's group.
	CHECK(eventually([&] { return p.a.store->reopens() == 1 &&
				      p.a.store->lock_state() == rbd_lock_state::standby; }, 15s));
	CHECK(eventually([&] { return reports(p.a, 2); }, 5s));
	// Its old client was blocklisted by the takeover; once reopened it
	// removed that entry (the client is gone).
	INFO("a was " << a_address);
	CHECK(eventually([&] { return !p.admin.blocklisted(a_address); }, 5s));
	std::vector<char> seen(4096);
	REQUIRE(rbd_read(p.admin.open(p.name), 0, seen.size(), seen.data()) == 4096);
	CHECK(seen == ours);

	// Within its holdoff, a's writes are BUSY and leave the lock with b.
	std::vector<char> theirs = pattern(4096, 22);
	CHECK(p.a.write(0, theirs) == -EBUSY);
	std::this_thread::sleep_for(500ms);
	CHECK(p.b.store->lock_state() == rbd_lock_state::owner);
	CHECK(p.a.store->takeovers() == 0);
	// After it, the initiator's path choice moves the lock back.
	CHECK(write_until_good(p.a, 0, theirs, 15s) == 4096);
	CHECK(p.a.store->takeovers() == 1);
	CHECK(eventually([&] { return p.b.store->lock_state() != rbd_lock_state::owner; }, 5s));
	REQUIRE(rbd_read(p.admin.open(p.name), 0, seen.size(), seen.data()) == 4096);
	CHECK(seen == theirs);
}

TEST_CASE("rbd ALUA: without implicit failover a standby never breaks the owner's lock",
	  "[rbd][alua]")
{
	alua_pair p(2s, false);
	std::vector<char> ours = pattern(4096, 23);
	CHECK(p.b.write(0, ours) == -EBUSY);
	std::this_thread::sleep_for(1200ms);
	CHECK(p.b.write(0, ours) == -EROFS);
	CHECK(p.a.store->lock_state() == rbd_lock_state::owner);
	CHECK(p.b.store->takeovers() == 0);
	CHECK(p.a.store->reopens() == 0);
}

// Two initiators writing through different gateways at once: the lock
// moves, but each gateway waits out its holdoff after losing it, so over T
// seconds there are at most T / holdoff + 1 moves, and both get writes in.
TEST_CASE("rbd ALUA: gateways written at once move the lock at most once per holdoff",
	  "[rbd][alua]")
{
	constexpr auto holdoff = 1s;
	constexpr auto span = 6s;
	alua_pair p(holdoff);
	std::vector<char> da = pattern(4096, 31), db = pattern(4096, 32);
	int good_a = 0, good_b = 0, other = 0;
	auto end = std::chrono::steady_clock::now() + span;
	while (std::chrono::steady_clock::now() < end) {
		for (auto [f, data, good] : {std::tuple{&p.a, &da, &good_a}, {&p.b, &db, &good_b}}) {
			int64_t r = f->write(0, *data);
			if (r == 4096)
				++*good;
			else if (r != -EBUSY && r != -ENOTCONN)
				other++;
		}
		std::this_thread::sleep_for(20ms);
	}
	const unsigned moves = p.a.store->takeovers() + p.b.store->takeovers();
	INFO("moves " << moves << ", good a " << good_a << " b " << good_b);
	CHECK(other == 0);
	CHECK(moves >= 2);
	CHECK(moves <= span / holdoff + 1);
	CHECK(good_a > 0);
	CHECK(good_b > 0);
}

// The cluster's service map, as gwcli and the dashboard read it: the
// gateway under service "tcmu-runner" as "<host>:<pool>/<image>" with the
// image's metadata (`ceph service dump`), and its status (`ceph service
// status`: lock_owner and the counters) following a broken lock, the
// reopen, and the lock taken again.
TEST_CASE("rbd: a gateway registers in the service map with its lock state", "[rbd][alua]")
{
	if (!getenv("TCMUD_RBD_TEST_MGR")) {
		WARN("no mgr in this test cluster (ceph-mgr not installed): service map not checked");
		return;
	}
	admin_client admin;
	const std::string name = admin.create(image_size);
	rbd_fixture g(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size,
			       alua_pair::options(1s)));
	auto mgr = [&](const char *prefix) { return admin.command(admin_client::to::mgr, prefix); };
	auto status_has = [&](const std::string &field) {
		return mgr("service status").find(field) != std::string::npos;
	};
	char host[256] = {};
	gethostname(host, sizeof(host) - 1);
	const std::string daemon = std::string(host) + ":rbd/" + name;
	REQUIRE(eventually([&] { return mgr("service dump").find("\"" + daemon + "\"") !=
					std::string::npos; }, 20s));
	std::string d = mgr("service dump");
	INFO(d);
	CHECK(d.find("\"tcmu-runner\":") != std::string::npos);
	CHECK(d.find("\"image_name\":\"" + name + "\"") != std::string::npos);
	CHECK(d.find("\"pool_name\":\"rbd\"") != std::string::npos);
	CHECK(eventually([&] { return status_has("\"lock_owner\":\"true\""); }, 20s));
	CHECK(status_has("\"lock_lost_cnt\":\"0\""));

	// The lock broken (rbd lock rm): fenced, reopened with a new client
	// (registered again), the lock taken back as nobody holds it.
	break_exclusive_lock(admin.open(name));
	CHECK(eventually([&] { return g.store->reopens() == 1 &&
				      g.store->lock_state() == rbd_lock_state::owner; }, 20s));
	CHECK(eventually([&] { return status_has("\"conn_lost_cnt\":\"1\"") &&
				      status_has("\"lock_lost_cnt\":\"1\"") &&
				      status_has("\"lock_owner\":\"true\""); }, 20s));
	INFO(mgr("service status"));
}
