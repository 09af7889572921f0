// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// File access to one TCMU device's configfs directory,
//   <configfs>/target/core/user_<hba>/<device>/
// with attrib/ (hw_block_size, hw_max_sectors, dev_size, ...), info,
// wwn/vpd_unit_serial and action/ (block_dev, reset_ring). Only reads and
// writes; when to do them is the lifecycle's business. They run at set-up
// and on rare control paths (take-over, a broken ring's reset), never per
// command: errors are setup_result, naming the file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "device/device_roots.h"
#include "tcmud/setup_result.h"

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

	// attrib/<name>. EINVAL for a name that is not one path component.
	setup_result<std::string> read_attrib(std::string_view name) const;
	setup_result<uint64_t> read_attrib_u64(std::string_view name) const;

	setup_result<uint32_t> hw_block_size() const;
	setup_result<uint64_t> dev_size() const;
	setup_result<bool> emulate_write_cache() const;

	// The device's "info" file, as text.
	setup_result<std::string> info() const;
	// wwn/<name>, as text.
	setup_result<std::string> read_wwn(std::string_view name) const;
	// The serial from wwn/vpd_unit_serial, without the kernel's
	// "T10 VPD Unit Serial Number: " label.
	setup_result<std::string> unit_serial() const;

	// The device's "enable": 1 once configured. A tcm-user device whose
	// uio exists but reads 0 is still inside its configfs enable, waiting
	// for a daemon's ADDED_DEVICE reply.
	setup_result<bool> enabled() const;
	// LIO's device index (statistics/scsi_dev/indx): the TCMU_ATTR_DEVICE_ID
	// the kernel puts in netlink events and expects back in replies.
	setup_result<uint32_t> device_index() const;

	// action/block_dev: 1 stops the kernel queueing to the ring, 0 resumes.
	setup_result<void> block_dev() const;
	setup_result<void> unblock_dev() const;
	// action/reset_ring: fails commands in flight and zeroes head and tail.
	setup_result<void> reset_ring(ring_reset_level level) const;

private:
	// dir_/<sub>/<name>, or EINVAL when either is not one path component.
	setup_result<std::filesystem::path> path_of(std::string_view sub, std::string_view name) const;
	setup_result<std::string> read_in(std::string_view sub, std::string_view name) const;
	setup_result<uint32_t> read_u32(std::string_view sub, std::string_view name) const;
	setup_result<void> write_action(std::string_view name, std::string_view value) const;

	std::filesystem::path dir_;
	bool valid_ = false;
};

} // namespace tcmud
