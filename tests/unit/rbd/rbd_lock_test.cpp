// SPDX-License-Identifier: GPL-2.0-or-later
// Several gateways on one image, and a cluster that stops answering: the
// exclusive lock keeps a gateway that lost it from writing, and an OSD op
// timeout ends a command instead of hanging it.
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>
#include <tuple>

#include "rbd_test_util.h"

using namespace tcmud;
using namespace tcmud::test;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t image_size = 8 << 20;

bool wait_for_state(const rbd_backstore &store, rbd_lock_state want, std::chrono::seconds limit)
{
	auto end = std::chrono::steady_clock::now() + limit;
	while (store.lock_state() != want && std::chrono::steady_clock::now() < end)
		std::this_thread::sleep_for(50ms);
	return store.lock_state() == want;
}

// Whether /proc says pid is stopped (state T), within 5 s.
bool wait_until_stopped(pid_t pid)
{
	std::string path = "/proc/" + std::to_string(pid) + "/stat";
	for (int i = 0; i < 500; i++) {
		std::ifstream in(path);
		std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
		size_t close = stat.rfind(')');
		if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'T')
			return true;
		std::this_thread::sleep_for(10ms);
	}
	return false;
}

} // namespace

TEST_CASE("rbd lock: a gateway whose lock is broken is fenced, writes nothing, and reopens",
	  "[rbd][lock]")
{
	admin_client admin;
	std::string name = admin.create(image_size);
	rbd_open_options opts;
	opts.lock_poll = 200ms;
	opts.reopen_backoff = 200ms;
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size, opts));
	REQUIRE(f.store->lock_state() == rbd_lock_state::owner);
	const uint64_t first_id = f.store->instance_id();
	std::vector<char> ours = pattern(4096, 1);
	REQUIRE(f.write(0, ours) == 4096);

	// Another gateway takes over the way tcmu-runner's failover does:
	// break the owner's lock (which blocklists it), then acquire.
	admin_client other;
	rbd_image_t img = other.open(name);
	break_exclusive_lock(img);
	REQUIRE(rbd_lock_acquire(img, RBD_LOCK_MODE_EXCLUSIVE) == 0);
	std::vector<char> theirs = pattern(4096, 2);
	REQUIRE(rbd_write(img, 0, theirs.size(), theirs.data()) == ssize_t(theirs.size()));

	// Our next write fails (and is not written through): blocklisted,
	// then reconnecting (retryable), or, once reopened while the other
	// gateway holds the lock, write protected. Never success.
	std::vector<char> late = pattern(4096, 3);
	int64_t r = f.write(0, late);
	CHECK((r == -ENOTCONN || r == -EROFS));
	// A fresh client (new instance id), in standby behind the live
	// owner: writes DATA PROTECT at once (no BUSY grace), reads work.
	REQUIRE(wait_for_state(*f.store, rbd_lock_state::standby, 30s));
	CHECK(f.store->reopens() == 1);
	CHECK(f.store->status().reopens == 1);
	CHECK(f.store->status().state == "standby");
	CHECK(f.store->instance_id() != first_id);
	CHECK(f.write(8192, late) == -EROFS);
	CHECK(f.read(0, 4096) == theirs);

	// Once the other gateway lets go, the lock is ours and writes go
	// through again, without reopening the device.
	REQUIRE(rbd_lock_release(img) == 0);
	REQUIRE(wait_for_state(*f.store, rbd_lock_state::owner, 10s));
	CHECK(f.write(0, late) == 4096);
	std::vector<char> seen(4096);
	REQUIRE(rbd_read(img, 0, seen.size(), seen.data()) == ssize_t(seen.size()));
	CHECK(seen == late);
	CHECK(f.read(8192, 4096) == std::vector<char>(4096, 0));
}

TEST_CASE("rbd lock: writes librbd's cache held when the client was fenced fail the next "
	  "SYNCHRONIZE CACHE", "[rbd][lock][cache]")
{
	// WCE=1 lets writes be acknowledged from librbd's cache; a blocklist
	// then drops them. The initiator learns it only from its next
	// SYNCHRONIZE CACHE: that must fail, not answer GOOD.
	admin_client admin;
	std::string name = admin.create(image_size);
	std::ifstream real(ceph_conf());
	std::string text((std::istreambuf_iterator<char>(real)), std::istreambuf_iterator<char>());
	// Writeback from the first write, and nothing written back by age.
	temp_conf cached(text + "\n[client]\nrbd cache = true\n"
				"rbd cache writethrough until flush = false\n"
				"rbd cache max dirty age = 600\n");
	rbd_open_options opts;
	opts.lock_poll = 200ms;
	opts.reopen_backoff = 200ms;
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + cached.path, image_size, opts));
	REQUIRE(f.store->cache_enabled());
	REQUIRE(f.store->lock_state() == rbd_lock_state::owner);
	// Flushed: nothing to lose, and a flush with nothing lost is GOOD.
	std::vector<char> safe = pattern(4096, 4);
	REQUIRE(f.write(0, safe) == 4096);
	REQUIRE(f.range(block_op::flush, 0, 0) == 0);
	// Acknowledged from the cache only.
	std::vector<char> cached_only = pattern(4096, 5);
	REQUIRE(f.write(65536, cached_only) == 4096);

	// Another gateway breaks the lock (blocklisting us) and takes it.
	admin_client other;
	rbd_image_t img = other.open(name);
	break_exclusive_lock(img);
	REQUIRE(rbd_lock_acquire(img, RBD_LOCK_MODE_EXCLUSIVE) == 0);
	REQUIRE(wait_for_state(*f.store, rbd_lock_state::standby, 30s));
	CHECK(f.store->reopens() == 1);
	CHECK(f.store->status().reopens == 1);
	CHECK(f.store->status().state == "standby");
	std::vector<char> seen(4096);
	REQUIRE(rbd_read(img, 65536, seen.size(), seen.data()) == ssize_t(seen.size()));
	INFO("the cached write " << (seen == cached_only ? "reached" : "never reached")
				  << " the OSDs");
	// The next SYNCHRONIZE CACHE reports the loss (librbd may have written
	// that write back before the fence: tcmud cannot tell, and says it
	// may be lost rather than that it is safe). Once the lock is ours
	// again, flushes are GOOD: the loss was reported once.
	CHECK(f.range(block_op::flush, 0, 0) == -EIO);
	REQUIRE(rbd_lock_release(img) == 0);
	REQUIRE(wait_for_state(*f.store, rbd_lock_state::owner, 10s));
	CHECK(f.range(block_op::flush, 0, 0) == 0);
}

TEST_CASE("rbd lock: while another gateway owns the image, writes are refused", "[rbd][lock]")
{
	admin_client admin;
	std::string name = admin.create(image_size);
	admin_client other;
	rbd_image_t img = other.open(name);
	REQUIRE(rbd_lock_acquire(img, RBD_LOCK_MODE_EXCLUSIVE) == 0);
	std::vector<char> theirs = pattern(4096, 4);
	REQUIRE(rbd_write(img, 0, theirs.size(), theirs.data()) == ssize_t(theirs.size()));

	rbd_open_options opts;
	opts.standby_grace = 2s;
	opts.lock_poll = 200ms;
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size, opts));
	CHECK(f.store->lock_state() == rbd_lock_state::standby);
	std::vector<char> ours = pattern(4096, 5);
	// First BUSY (a restarted gateway waits for its dead predecessor's
	// lock to be broken), then DATA PROTECT; reads work throughout.
	CHECK(f.write(0, ours) == -EBUSY);
	CHECK(f.read(0, 4096) == theirs);
	std::this_thread::sleep_for(2100ms);
	CHECK(f.write(0, ours) == -EROFS);
	CHECK(f.range(block_op::discard, 0, 4096) == -EROFS);

	// Once the owner lets go, the lock is ours within a poll or two.
	REQUIRE(rbd_lock_release(img) == 0);
	REQUIRE(wait_for_state(*f.store, rbd_lock_state::owner, 10s));
	CHECK(f.write(0, ours) == 4096);
	CHECK(f.read(0, 4096) == ours);
}

// Two tcmud gateways on one fresh image, each with its own rados client,
// image handle and lock, as two daemons would have them: a opens first and
// owns the lock, b waits in standby (BUSY grace 1 s, lock polled every
// 200 ms). a is a pointer so that a test can make that gateway go away.
struct two_gateways {
	static rbd_open_options options()
	{
		rbd_open_options opts;
		opts.standby_grace = 1s;
		opts.lock_poll = 200ms;
		return opts;
	}
	admin_client admin;
	std::string name = admin.create(image_size);
	std::string cfg = "rbd/" + name + ";conf=" + ceph_conf();
	std::unique_ptr<rbd_fixture> a =
		std::make_unique<rbd_fixture>(open_rbd(cfg, image_size, options()));
	rbd_fixture b{open_rbd(cfg, image_size, options())};
};

// What tcmudctl and the metrics show of two gateways on one image: the
// owner says so and names itself as the cluster names it; the standby
// names the same holder; when the owner goes, the standby's status follows
// within a lock poll or two, now naming itself.
TEST_CASE("rbd status: each gateway reports its state and the same lock owner", "[rbd][lock]")
{
	two_gateways g;
	auto &a = g.a;
	rbd_fixture &b = g.b;
	backstore_status sa = a->store->status(), sb = b.store->status();
	INFO("a: " << sa.state << " " << sa.lock_owner << "; b: " << sb.state << " " << sb.lock_owner);
	CHECK(sa.state == "owner");
	CHECK(sa.lock_owner_is_us);
	CHECK(sb.state == "standby");
	CHECK_FALSE(sb.lock_owner_is_us);
	CHECK(sa.lock_owner != "");
	CHECK(sa.lock_owner != "nobody");
	CHECK(sb.lock_owner == sa.lock_owner);
	CHECK(sa.reopens == 0);

	a.reset();
	REQUIRE(wait_for_state(*b.store, rbd_lock_state::owner, 10s));
	sb = b.store->status();
	CHECK(sb.state == "owner");
	CHECK(sb.lock_owner_is_us);
	CHECK(sb.lock_owner != sa.lock_owner);
	CHECK(sb.lock_owner != "nobody");
}

// An image without the exclusive-lock feature has no lock to report.
TEST_CASE("rbd status: no exclusive-lock feature, no lock owner", "[rbd][lock]")
{
	admin_client admin;
	std::string name = admin.create(image_size, false);
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size, {}));
	backstore_status s = f.store->status();
	CHECK(s.state == "serving");
	CHECK(s.lock_owner.empty());
}

// Two tcmud gateways (each its own rados client, image handle and lock, as
// two daemons would have) write the same blocks at the same time: only the
// lock owner's writes succeed, the other's all fail with BUSY or DATA
// PROTECT, and the image holds exactly the owner's data. Once the owner
// goes away, the other takes the lock and writes.
TEST_CASE("rbd lock: two tcmud gateways race on one image; the loser writes nothing",
	  "[rbd][lock]")
{
	two_gateways g;
	auto &a = g.a;
	rbd_fixture &b = g.b;
	REQUIRE(a->store->lock_state() == rbd_lock_state::owner);
	REQUIRE(b.store->lock_state() == rbd_lock_state::standby);

	// Each gateway writes blocks 0..N-1 with its own pattern, the two
	// writes of a block in flight at the same time, over a span that
	// covers the loser's BUSY grace and its DATA PROTECT. (One thread:
	// each io_uring belongs to the thread that made it.)
	constexpr int blocks = 16;
	std::vector<int64_t> won, lost;
	auto end = std::chrono::steady_clock::now() + 1500ms;
	for (int round = 0; round == 0 || std::chrono::steady_clock::now() < end; round++)
		for (int i = 0; i < blocks; i++) {
			std::vector<char> da = pattern(4096, 10u + unsigned(i));
			std::vector<char> db = pattern(4096, 60u + unsigned(i));
			iovec va{da.data(), da.size()}, vb{db.data(), db.size()};
			block_io ia, ib;
			recording_done done_a, done_b;
			for (auto [io, v, done] : {std::tuple{&ia, &va, &done_a}, {&ib, &vb, &done_b}}) {
				io->op = block_op::write;
				io->offset = uint64_t(i) * 4096;
				io->length = 4096;
				io->iov = {v, 1};
				io->done = done;
			}
			b.queue->submit(ib);
			a->queue->submit(ia);
			const __kernel_timespec wait{.tv_sec = 0, .tv_nsec = 10'000'000};
			auto limit = std::chrono::steady_clock::now() + 20s;
			while ((done_a.results.empty() || done_b.results.empty()) &&
			       std::chrono::steady_clock::now() < limit) {
				REQUIRE(a->engine->run_once(done_a.results.empty(), &wait) >= 0);
				REQUIRE(b.engine->run_once(done_b.results.empty(), &wait) >= 0);
			}
			REQUIRE(done_a.results.size() == 1);
			REQUIRE(done_b.results.size() == 1);
			won.push_back(done_a.results[0]);
			lost.push_back(done_b.results[0]);
		}
	CHECK(std::count(won.begin(), won.end(), 4096) == ssize_t(won.size()));
	CHECK(std::count(lost.begin(), lost.end(), -EBUSY) > 0);
	CHECK(std::count(lost.begin(), lost.end(), -EROFS) > 0);
	CHECK(std::count(lost.begin(), lost.end(), -EBUSY) +
		      std::count(lost.begin(), lost.end(), -EROFS) ==
	      ssize_t(lost.size()));
	// The image, read by a third client: the owner's blocks, every one.
	rbd_image_t img = g.admin.open(g.name);
	for (int i = 0; i < blocks; i++) {
		std::vector<char> seen(4096);
		REQUIRE(rbd_read(img, uint64_t(i) * 4096, seen.size(), seen.data()) == 4096);
		CHECK(seen == pattern(4096, 10u + unsigned(i)));
	}

	// The owner goes away (device removed, daemon stopped): its lock is
	// released and the other gateway takes it within a poll or two.
	a.reset();
	REQUIRE(wait_for_state(*b.store, rbd_lock_state::owner, 10s));
	std::vector<char> now = pattern(4096, 99);
	CHECK(b.write(0, now) == 4096);
	std::vector<char> seen(4096);
	REQUIRE(rbd_read(img, 0, seen.size(), seen.data()) == 4096);
	CHECK(seen == now);
}

TEST_CASE("rbd: an OSD that stops answering times out; I/O resumes after it returns",
	  "[rbd][timeout]")
{
	const char *pid_text = getenv("TCMUD_RBD_TEST_OSD_PID");
	if (!pid_text) {
		WARN("TCMUD_RBD_TEST_OSD_PID not set: OSD outage not tested");
		return;
	}
	const pid_t osd = static_cast<pid_t>(atoi(pid_text));
	admin_client admin;
	std::string name = admin.create(image_size);
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf() + ";osd_op_timeout=3",
			       image_size));
	std::vector<char> data = pattern(4096, 6);
	REQUIRE(f.write(0, data) == 4096);

	REQUIRE(kill(osd, SIGSTOP) == 0);
	// SIGSTOP takes effect asynchronously: a busy OSD may still answer
	// one more request unless we wait until it is really stopped.
	REQUIRE(wait_until_stopped(osd));
	auto t0 = std::chrono::steady_clock::now();
	int64_t r = f.write(4096, data);
	double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	REQUIRE(kill(osd, SIGCONT) == 0);
	CHECK(r == -ETIMEDOUT);
	CHECK(waited >= 2.5);
	CHECK(waited < 10);

	// The same handle serves again, without reopening.
	int64_t again = -1;
	for (int i = 0; i < 20 && again != 4096; i++)
		again = f.write(8192, data);
	CHECK(again == 4096);
	CHECK(f.read(8192, 4096) == data);
	CHECK(f.store->lock_state() == rbd_lock_state::owner);
}

// A gateway restarted after SIGKILL finds its dead predecessor's lock:
// librbd breaks it once the holder does not answer, and until then writes
// are BUSY (the initiator retries), never an error it would pass on.
// Hidden ([.], run it with "[slow]"): it waits for the OSD to drop the dead
// holder's watch, ~30 s; the VM scenarios kill tcmud under I/O in CI.
TEST_CASE("rbd lock: a SIGKILLed holder's lock is taken over, writes BUSY meanwhile",
	  "[.][slow][rbd][lock]")
{
	admin_client admin;
	std::string name = admin.create(image_size);
	char self[4096] = {};
	REQUIRE(readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
	std::string holder = std::string(self);
	holder = holder.substr(0, holder.rfind('/')) + "/rbd_lock_holder";

	int out[2];
	REQUIRE(pipe(out) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		int null = ::open("/dev/null", O_WRONLY);
		dup2(null, 2);  // librados' chatter must not keep the test's pipes open
		execl(holder.c_str(), holder.c_str(), ceph_conf().c_str(), "rbd", name.c_str(),
		      static_cast<char *>(nullptr));
		_exit(127);
	}
	// Killed and reaped whatever happens below.
	struct reaper {
		pid_t pid;
		~reaper()
		{
			if (pid > 0) {
				kill(pid, SIGKILL);
				waitpid(pid, nullptr, 0);
			}
		}
	} child{pid};
	close(out[1]);
	std::string said;
	char buf[64];
	ssize_t n;
	while (said.find("locked\n") == std::string::npos &&
	       (n = read(out[0], buf, sizeof(buf))) > 0)
		said.append(buf, size_t(n));
	close(out[0]);
	INFO("holder said: " << said);
	REQUIRE(said.find("locked\n") != std::string::npos);
	REQUIRE(kill(pid, SIGKILL) == 0);
	REQUIRE(waitpid(pid, nullptr, 0) == pid);
	child.pid = -1;

	rbd_open_options opts;
	opts.lock_poll = 500ms;
	auto t0 = std::chrono::steady_clock::now();
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size, opts));
	std::vector<char> data = pattern(4096, 9);
	int64_t r = -1;
	size_t busy = 0;
	double opened = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	CHECK(opened < 2);  // open does not wait for the dead owner
	CHECK(f.store->lock_state() == rbd_lock_state::standby);
	while (std::chrono::steady_clock::now() - t0 < 44s) {
		r = f.write(0, data);
		if (r != -EBUSY)
			break;
		busy++;
		std::this_thread::sleep_for(250ms);
	}
	double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	UNSCOPED_INFO("lock taken over after " << took << " s, " << busy << " BUSY writes");
	CHECK(r == 4096);
	CHECK(f.store->lock_state() == rbd_lock_state::owner);
	CHECK(f.read(0, 4096) == data);
}
