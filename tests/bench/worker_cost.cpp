// SPDX-License-Identifier: GPL-2.0-or-later
// The queue worker's own user-space cost per command, without a VM: one
// worker on the in-process ring model, serving a ram LUN, fed BATCH 4 KiB
// READs (or WRITEs) per doorbell, COMMANDS in all; SUBTYPE file serves a
// temp file through the file handler's io_uring path instead. Run it under callgrind
// (scripts/worker-cost.sh) and divide the worker thread's instructions by
// COMMANDS: what the daemon spends per command in user space, the figure
// issue 16 asks to bring to <= 800. Hidden from the unit suite ([.]).
//   WORKER_COST_COMMANDS=20000 WORKER_COST_BATCH=8 WORKER_COST_OP=read
//   WORKER_COST_SUBTYPE=ram|file
//   WORKER_COST_FIXED=1: the model's mailbox has CAP_DATA_FIXED, so the
//   worker registers the data area and the file handler uses READ_FIXED/
//   WRITE_FIXED (docs/daemon.md, "Fixed buffers over the data area")
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "ring/tcmu_abi.h"
#include "worker_rig.h"

namespace {

size_t env_or(const char *name, size_t fallback)
{
	const char *v = std::getenv(name);
	return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

std::vector<uint8_t> cdb10(uint8_t op, uint32_t lba, uint16_t blocks)
{
	return {op,
		0,
		uint8_t(lba >> 24),
		uint8_t(lba >> 16),
		uint8_t(lba >> 8),
		uint8_t(lba),
		0,
		uint8_t(blocks >> 8),
		uint8_t(blocks),
		0};
}

} // namespace

TEST_CASE("worker cost: 4 KiB commands through one worker on a ram LUN", "[.][bench]")
{
	const size_t commands = env_or("WORKER_COST_COMMANDS", 20000);
	const size_t batch = env_or("WORKER_COST_BATCH", 8);
	const char *op_env = std::getenv("WORKER_COST_OP");
	const bool write = op_env && std::string(op_env) == "write";
	const char *subtype_env = std::getenv("WORKER_COST_SUBTYPE");
	const std::string subtype = subtype_env && *subtype_env ? subtype_env : "ram";
	REQUIRE((subtype == "ram" || subtype == "file"));
	REQUIRE(batch > 0);
	REQUIRE(batch <= 32);
	constexpr uint32_t block = 512, lbas = 8;         // 4 KiB per command
	constexpr uint64_t blocks = (64u << 20) / block;  // 64 MiB LUN
	const bool fixed = env_or("WORKER_COST_FIXED", 0) != 0;
	tcmud::test::model_options ring;
	if (fixed)
		ring.flags |= TCMUD_MB_FLAG_CAP_DATA_FIXED;
	tcmud::test::single_queue_rig rig(block, blocks, subtype + "/bench:", subtype, 64, {},
					  ring);
	REQUIRE(rig.worker->data_area_registered() == fixed);
	std::vector<uint8_t> data(size_t(block) * lbas, 0xa5);
	uint32_t lba = 0;
	size_t queued = 0;
	while (queued < commands) {
		size_t n = std::min(batch, commands - queued);
		for (size_t i = 0; i < n; ++i) {
			auto cdb = cdb10(write ? 0x2a : 0x28, lba, lbas);
			auto id = write ? rig.model.queue_command(cdb, data)
					: rig.model.queue_command(cdb, {}, data.size());
			REQUIRE(id);
			// A pseudo-random walk over the LUN, as fio's randread does.
			lba = uint32_t((lba + 7919 * lbas) % (blocks - lbas)) / lbas * lbas;
		}
		queued += n;
		rig.interrupt();
		rig.collect(queued);
	}
	for (const auto &c : rig.model.completions())
		REQUIRE(c.scsi_status == 0);
	WARN("worker served " << commands << " " << (write ? "WRITE" : "READ")
			      << "s of 4 KiB in batches of " << batch << " from " << subtype);
}
