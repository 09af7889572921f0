// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Which CPU each queue worker of a device runs on (tcmud.conf queue_cpus,
// --queue-cpus).
//
//   auto     multi-queue devices only: worker q runs on CPU q % online CPUs.
//            The patched kernel puts a command on queue (submitting CPU % N)
//            (kmod/patches/0002, tcmu_queue_cmd), so with N <= online CPUs
//            worker q shares a CPU with queue q's submitters and the ring's
//            cache lines stay there. A single-queue device is not pinned: its
//            one worker serves every CPU.
//   none     no worker is pinned; the scheduler places them.
//   <list>   e.g. "0-3,8": worker q runs on the (q % count)-th CPU of the
//            list, on single-queue devices too.
#include <string>
#include <string_view>
#include <vector>

#include "tcmud/setup_result.h"

namespace tcmud {

struct queue_placement {
	enum class mode { automatic, none, list };
	mode how = mode::automatic;
	std::vector<int> cpus; // mode::list: in the order given, no duplicates

	bool operator==(const queue_placement &) const = default;
};

// The largest CPU number a list may name (CPU_SETSIZE - 1).
inline constexpr int max_cpu_number = 1023;

// The placement text names, or EINVAL and what is wrong with it (no key
// name in the message).
setup_result<queue_placement> parse_queue_placement(std::string_view text);

// The CPU queue q of nr_queues runs on, or -1 for "not pinned".
// online_cpus: how many CPUs are online (at least 1).
int queue_cpu(const queue_placement &p, unsigned q, unsigned nr_queues, unsigned online_cpus);

// "auto", "none" or the list as "0-3,8", for logs and messages.
std::string to_string(const queue_placement &p);

} // namespace tcmud
