// SPDX-License-Identifier: GPL-2.0-or-later
// The watchdog's view of a queue worker: a worker whose loop runs answers
// each probe; one stuck (the test hook stalls its loop) does not, until the
// stall ends. And systemd's WATCHDOG_USEC/WATCHDOG_PID as the daemon reads
// them.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "config/sd_notify.h"
#include "core/device_registry.h"
#include "core/worker_watchdog.h"
#include "log/log.h"
#include "worker_rig.h"

using namespace tcmud;
using namespace std::chrono_literals;

namespace {

// Probes until the worker has answered the previous probe, 5 s at most.
bool answers_within_5s(queue_worker &w)
{
	for (int i = 0; i < 100; ++i) {
		std::this_thread::sleep_for(50ms);
		if (w.probe_alive())
			return true;
	}
	return false;
}

} // namespace

TEST_CASE("watchdog: a running worker answers probes, a stalled one does not")
{
	set_log_level(log_level::error);
	tcmud::test::single_queue_rig h(512, 2048, "file/wd:");
	queue_worker &w = *h.worker;
	REQUIRE(w.probe_alive()); // nothing asked yet
	REQUIRE(answers_within_5s(w));
	REQUIRE(answers_within_5s(w));

	w.stall_for_test(1500);
	std::this_thread::sleep_for(300ms);
	w.probe_alive(); // may see the answer to a probe sent before the stall
	std::this_thread::sleep_for(300ms);
	CHECK_FALSE(w.probe_alive());
	std::this_thread::sleep_for(300ms);
	CHECK_FALSE(w.probe_alive());
	// The stall ends: the loop runs again and answers.
	REQUIRE(answers_within_5s(w));
}

TEST_CASE("watchdog: WATCHDOG_USEC and WATCHDOG_PID")
{
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	CHECK(sd_watchdog_usec() == 0);
	setenv("WATCHDOG_USEC", "20000000", 1);
	CHECK(sd_watchdog_usec() == 20'000'000);
	setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
	CHECK(sd_watchdog_usec() == 20'000'000);
	// Meant for another process (a child that inherited the environment).
	setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
	CHECK(sd_watchdog_usec() == 0);
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "20s", 1);
	CHECK(sd_watchdog_usec() == 0);
	unsetenv("WATCHDOG_USEC");
}

namespace {

// systemd's end of $NOTIFY_SOCKET: counts the WATCHDOG=1 datagrams.
struct notify_listener {
	std::string path;
	int fd = -1;
	notify_listener()
	{
		path = "/tmp/tcmud-wd-" + std::to_string(getpid()) + ".sock";
		unlink(path.c_str());
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		sockaddr_un a{};
		a.sun_family = AF_UNIX;
		std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
		REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
		setenv("NOTIFY_SOCKET", path.c_str(), 1);
	}
	~notify_listener()
	{
		unsetenv("NOTIFY_SOCKET");
		close(fd);
		unlink(path.c_str());
	}
	int pings()
	{
		int n = 0;
		char buf[256];
		ssize_t got;
		while ((got = recv(fd, buf, sizeof buf, 0)) > 0)
			n += std::string(buf, size_t(got)).find("WATCHDOG=1") != std::string::npos;
		return n;
	}
};

} // namespace

TEST_CASE("watchdog: pings from its own thread while the control loop runs or is busy with "
	  "a step it announced, not when it hangs")
{
	set_log_level(log_level::error);
	notify_listener systemd;
	device_registry devices(device_roots{"/nonexistent", "/nonexistent", "/nonexistent",
					     "/nonexistent"},
				device_options{});
	worker_watchdog wd(200'000, devices); // ticks every 100 ms
	REQUIRE(wd.enabled());
	for (int i = 0; i < 10; ++i) {
		wd.control_loop_ran();
		std::this_thread::sleep_for(50ms);
	}
	CHECK(systemd.pings() >= 3);
	// A device removal blocks the control thread for longer than the
	// interval (a drain of stuck I/O): announced, the pings go on.
	wd.control_busy_for(1500);
	std::this_thread::sleep_for(1000ms);
	CHECK(systemd.pings() >= 5);
	// Past the announced time and silent: a hung loop, no more pings.
	std::this_thread::sleep_for(1000ms);
	systemd.pings();
	std::this_thread::sleep_for(600ms);
	CHECK(systemd.pings() == 0);
	// It runs again: pings again.
	for (int i = 0; i < 10; ++i) {
		wd.control_loop_ran();
		std::this_thread::sleep_for(50ms);
	}
	CHECK(systemd.pings() >= 3);
}
