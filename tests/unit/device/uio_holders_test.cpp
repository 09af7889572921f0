// SPDX-License-Identifier: GPL-2.0-or-later
// processes_holding: the other processes with a character device open, as
// a new daemon asks before taking over a device whose previous daemon may
// still be exiting with I/O in flight.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "device/uio_holders.h"

using namespace tcmud;

namespace {

bool listed(const std::vector<pid_t> &pids, pid_t pid)
{
	return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

} // namespace

TEST_CASE("processes_holding finds another process with the device open, not itself",
	  "[device][holders]")
{
	// /dev/null stands in for /dev/uioN: any character device will do.
	struct stat st;
	REQUIRE(stat("/dev/null", &st) == 0);
	int mine = open("/dev/null", O_RDONLY | O_CLOEXEC);
	REQUIRE(mine >= 0);
	int gate[2];
	REQUIRE(pipe(gate) == 0);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		close(gate[1]);
		int held = open("/dev/null", O_RDONLY);
		char c;
		// Holds the device until the parent closes its end.
		(void)!read(gate[0], &c, 1);
		close(held);
		_exit(0);
	}
	close(gate[0]);
	std::vector<pid_t> holders;
	for (int i = 0; i < 500 && !listed(holders, child); ++i) {
		holders = processes_holding(st.st_rdev);
		usleep(2000);
	}
	CHECK(listed(holders, child));
	CHECK_FALSE(listed(holders, getpid()));
	close(gate[1]);
	int status = 0;
	REQUIRE(waitpid(child, &status, 0) == child);
	CHECK_FALSE(listed(processes_holding(st.st_rdev), child));
	// A device nobody has open (a made-up number) has no holder.
	CHECK(processes_holding(makedev(4095, 1048575)).empty());
	close(mine);
}
