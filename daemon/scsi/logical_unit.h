// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A SCSI direct-access logical unit (SBC-4) emulated over a backstore.
//
// One logical_unit is shared by every queue thread of a device. Its state is
// read-mostly: identity and block size are fixed at creation; the capacity
// (online resize) and the two mode-page bits MODE SELECT can change (WCE,
// D_SENSE) are atomics; the only lock is
// the range lock's mutex, which plain READ/WRITE never take unless a
// COMPARE AND WRITE is in progress (see range_lock.h).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tcmud/backstore.h"
#include "tcmud/setup_result.h"

#include "atomic_gate.h"
#include "command.h"
#include "copy_targets.h"
#include "range_lock.h"
#include "target_port_groups.h"

namespace tcmud::scsi {

class copy_results;

struct logical_unit_config {
	uint32_t block_size = 512;       // power of two, 512..65536
	uint64_t num_blocks = 0;         // at least 1 (at creation; see set_num_blocks)
	backstore_caps caps;
	std::string vendor = "TCMUD";    // INQUIRY: up to 8 ASCII characters
	std::string product = "tcmud";   // up to 16
	std::string revision = "0001";   // up to 4
	bool write_cache_enabled = true; // WCE at start; MODE SELECT may change it
	// Block limits (VPD 0xb0). A zero here means "use the default".
	// MAXIMUM TRANSFER LENGTH: the most blocks one READ/WRITE/VERIFY may
	// move, advertised and enforced; also the OPTIMAL TRANSFER LENGTH, as
	// LIO's own backstores report. The ring side sets the real value once
	// it knows the data area (set_max_transfer_blocks).
	uint32_t max_transfer_blocks = 0;          // default: 8 MiB worth
	uint8_t max_compare_and_write_blocks = 1;  // 1..255
	uint32_t max_unmap_blocks = 0;             // default: 256 MiB worth
	uint32_t max_unmap_descriptors = 0;        // default: 256
	uint64_t max_write_same_blocks = 0;        // default: 32 MiB worth, <= 0xffff
	uint16_t medium_rotation_rate = 0;         // VPD 0xb1: 0 not reported, 1 SSD
	// WRITE ATOMIC (VPD 0xb0 atomic fields; docs/scsi.md "WRITE ATOMIC").
	// A backstore that writes atomically across a crash (caps
	// atomic_write_unit_min/max) sets all three from its unit sizes; else
	// these, 0 meaning: 1 MiB worth, no alignment, no granularity. The
	// maximum is also capped by MAXIMUM TRANSFER LENGTH.
	uint32_t max_atomic_transfer_blocks = 0;
	uint32_t atomic_alignment_blocks = 0;
	uint32_t atomic_granularity_blocks = 0;
	// Tests only: false lets READs run into a WRITE ATOMIC in flight, so a
	// test can show that it would see the tear.
	bool atomic_read_exclusion = true;
	// Other LUNs an EXTENDED COPY may name (copy_targets.h); nullptr: only
	// this one, by its own NAA designator. copy_self is this LUN's name
	// there, which the registry's policy judges.
	copy_target_registry *copy_targets = nullptr;
	copy_member copy_self;
	// Returns the unit serial (configfs wwn/vpd_unit_serial). Called only
	// when VPD 0x80 or 0x83 is asked, from any queue thread, so it must be
	// thread-safe. Unset or empty: no serial-based designators.
	std::function<std::string()> unit_serial;
	// Returns the ALUA target port groups as they stand now
	// (target_port_groups.h). Called only for INQUIRY and REPORT TARGET
	// PORT GROUPS, from any queue thread: thread-safe, and quick (configfs
	// reads, no cluster I/O). Unset: no ALUA, and no such command.
	std::function<target_port_groups()> port_groups;
};

class logical_unit {
public:
	// EINVAL and the reason if the configuration is unusable.
	static setup_result<std::unique_ptr<logical_unit>> create(logical_unit_config cfg);

	~logical_unit();
	logical_unit(const logical_unit &) = delete;
	logical_unit &operator=(const logical_unit &) = delete;

	// Runs cmd (reset() beforehand) against `queue`, the calling queue
	// thread's channel to the backstore. cmd's owner is told when it is
	// done: maybe inside this call, maybe later from a completion.
	void execute(command &cmd, backstore_queue &queue);
	// Continues a command parked on the range lock, after its owner's
	// command_wake(); call it on the command's own queue thread.
	void resume(command &cmd, backstore_queue &queue);

	// --- read-mostly state for the command emulations ---
	const logical_unit_config &config() const { return cfg_; }
	uint32_t block_size() const { return cfg_.block_size; }
	uint64_t num_blocks() const { return num_blocks_.load(std::memory_order_acquire); }
	// Online resize (RECONFIG_DEVICE dev_size). A command racing with it
	// sees the old or the new capacity; the backstore keeps its own bound,
	// so none reaches past the end of what is really there.
	void set_num_blocks(uint64_t blocks) { num_blocks_.store(blocks, std::memory_order_release); }
	uint32_t max_transfer_blocks() const
	{
		return max_transfer_blocks_.load(std::memory_order_relaxed);
	}
	// At least 1. Set before the queues start; a later change is seen by
	// commands that start after it.
	void set_max_transfer_blocks(uint32_t blocks)
	{
		max_transfer_blocks_.store(blocks ? blocks : 1, std::memory_order_relaxed);
	}
	const backstore_caps &caps() const { return cfg_.caps; }
	std::string unit_serial() const;
	bool reports_port_groups() const { return static_cast<bool>(cfg_.port_groups); }
	target_port_groups port_groups() const;

	bool write_cache_enabled() const { return wce_.load(std::memory_order_relaxed); }
	void set_write_cache_enabled(bool on) { wce_.store(on, std::memory_order_relaxed); }
	bool descriptor_sense() const { return d_sense_.load(std::memory_order_relaxed); }
	void set_descriptor_sense(bool on) { d_sense_.store(on, std::memory_order_relaxed); }

	range_lock &ranges() { return ranges_; }
	atomic_gate &atomic_writes() { return atomic_writes_; }
	scsi::copy_results &copy_results() { return *copy_results_; }
	uint32_t max_atomic_transfer_blocks() const
	{
		return std::min(cfg_.max_atomic_transfer_blocks, max_transfer_blocks());
	}

private:
	explicit logical_unit(logical_unit_config cfg);

	const logical_unit_config cfg_;
	// Relaxed is enough: each bit is independent, and a command that races
	// with MODE SELECT may see either value (SPC-5 does not order them).
	std::atomic<bool> wce_;
	std::atomic<bool> d_sense_{false};
	std::atomic<uint64_t> num_blocks_;
	std::atomic<uint32_t> max_transfer_blocks_;
	range_lock ranges_;
	atomic_gate atomic_writes_;
	std::unique_ptr<scsi::copy_results> copy_results_;
};

} // namespace tcmud::scsi
