// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// File access to one TCMU device's configfs directory,
//   <configfs>/target/core/user_<hba>/<device>/
// with attrib/ (hw_block_size, hw_max_sectors, dev_size, ...), info,
// wwn/vpd_unit_serial and action/ (block_dev, reset_ring). Only reads and
// writes; when to do them is the lifecycle's business. Errors are -errno.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "device/device_roots.h"

namespace tcmud {

// Values for action/reset_ring (tcmu_reset_ring): how the kernel completes
// the commands still in flight.
enum class ring_reset_level : uint8_t {
	busy = 1,            // SAM_STAT_BUSY: the initiator retries
	check_condition = 2, // hard failure
};

class tcmu_configfs {
public:
	tcmu_configfs(const device_roots &roots, uint32_t hba, std::string_view device);

	const std::filesystem::path &dir() const { return dir_; }

	// attrib/<name>. -EINVAL for a name that is not one path component.
	int read_attrib(std::string_view name, std::string &out) const;
	int read_attrib_u64(std::string_view name, uint64_t &out) const;

	int hw_block_size(uint32_t &out) const;
	int dev_size(uint64_t &out) const;
	int emulate_write_cache(bool &out) const;

	// The device's "info" file, as text.
	int info(std::string &out) const;
	// wwn/<name>, as text.
	int read_wwn(std::string_view name, std::string &out) const;
	// The serial from wwn/vpd_unit_serial, without the kernel's
	// "T10 VPD Unit Serial Number: " label.
	int unit_serial(std::string &out) const;

	// The device's "enable": 1 once configured. A tcm-user device whose
	// uio exists but reads 0 is still inside its configfs enable, waiting
	// for a daemon's ADDED_DEVICE reply.
	int enabled(bool &out) const;
	// LIO's device index (statistics/scsi_dev/indx): the TCMU_ATTR_DEVICE_ID
	// the kernel puts in netlink events and expects back in replies.
	int device_index(uint32_t &out) const;

	// action/block_dev: 1 stops the kernel queueing to the ring, 0 resumes.
	int block_dev() const;
	int unblock_dev() const;
	// action/reset_ring: fails commands in flight and zeroes head and tail.
	int reset_ring(ring_reset_level level) const;

private:
	int read_in(std::string_view sub, std::string_view name, std::string &out) const;

	std::filesystem::path dir_;
	bool valid_ = false;
};

} // namespace tcmud
