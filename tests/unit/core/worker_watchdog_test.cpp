// SPDX-License-Identifier: GPL-2.0-or-later
// The watchdog's view of a queue worker: a worker whose loop runs answers
// each probe; one stuck (the test hook stalls its loop) does not, until the
// stall ends. And systemd's WATCHDOG_USEC/WATCHDOG_PID as the daemon reads
// them.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "config/sd_notify.h"
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
