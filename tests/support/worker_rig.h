// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What the queue-worker tests stand on. scratch_unit: a temp file served by
// the real file handler (or memory, by the ram handler), and the logical
// unit over it. single_queue_rig: one
// queue worker on the in-process ring model, a socketpair standing in for
// /dev/uioN (the test writes to raise the "interrupt"; the worker's 4-byte
// notify comes back on the other end).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "core/queue_worker.h"
#include "kernel_ring_model.h"
#include "scsi/logical_unit.h"
#include "tcmud/backstore.h"

namespace tcmud::test {

struct scratch_unit {
	std::filesystem::path file;
	std::unique_ptr<backstore> store;
	std::unique_ptr<scsi::logical_unit> lu;

	// subtype: "file" (a temp file unless cfgstring names one), "ram" (no
	// file at all) or any other handler, opened with cfgstring.
	scratch_unit(uint32_t block, uint64_t blocks, const std::string &subtype = "file",
		     const std::string &cfgstring = {});
	~scratch_unit();
	scratch_unit(const scratch_unit &) = delete;
	scratch_unit &operator=(const scratch_unit &) = delete;
};

struct single_queue_rig {
	kernel_ring_model model;
	int sv[2] = {-1, -1};
	scratch_unit unit;
	std::unique_ptr<queue_worker> worker;

	// tweak: changes the worker's parameters before it starts (another
	// backstore, a reset_ring hook). ring: the model's layout and mailbox
	// flags.
	single_queue_rig(uint32_t block, uint64_t blocks, const std::string &log_prefix,
			 const std::string &subtype = "file", size_t max_in_flight = 32,
			 const std::function<void(queue_params &)> &tweak = {},
			 const model_options &ring = {});
	single_queue_rig(uint32_t block, uint64_t blocks, const std::string &log_prefix,
			 const std::function<void(queue_params &)> &tweak)
		: single_queue_rig(block, blocks, log_prefix, "file", 32, tweak)
	{
	}
	~single_queue_rig();
	single_queue_rig(const single_queue_rig &) = delete;
	single_queue_rig &operator=(const single_queue_rig &) = delete;

	// Tells the worker the ring has new entries, as the kernel's irq does.
	void interrupt();
	// Waits for the worker's notifies (each must name queue 0) and hands
	// completions to the model until `want` commands in all have completed
	// and the ring is intact; returns how many notifies came. 10 s at most.
	size_t collect(size_t want);
};

} // namespace tcmud::test
