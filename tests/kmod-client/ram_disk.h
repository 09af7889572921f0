// SPDX-License-Identifier: GPL-2.0-or-later
// A RAM-backed SCSI direct-access device with just the commands the Linux
// sd driver needs to attach and fio needs to run: a test backend for
// tcmu-mq-client, not the product's SCSI layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace kmod_client {

// One piece of a command's data buffer, already bounds-checked against the
// queue's data area and translated to an address in our mapping.
struct data_segment {
	uint8_t *base;
	size_t len;
};

// The SCSI outcome of one command: GOOD, or CHECK CONDITION with fixed-format
// sense data (a value, never an exception).
struct scsi_result {
	uint8_t status = 0;
	uint8_t sense[18] = {};
	size_t sense_len = 0;
};

inline constexpr uint8_t SAM_STAT_GOOD = 0x00;
inline constexpr uint8_t SAM_STAT_CHECK_CONDITION = 0x02;

class ram_disk {
public:
	static constexpr uint32_t block_size = 512;

	// Maps `bytes` (a multiple of block_size) of anonymous memory.
	explicit ram_disk(uint64_t bytes);
	~ram_disk();
	ram_disk(const ram_disk &) = delete;
	ram_disk &operator=(const ram_disk &) = delete;

	bool ok() const { return data_ != nullptr; }

	// Executes one CDB. Several threads may call it at once: blocks are
	// copied with memcpy and overlapping I/O is the initiator's business.
	scsi_result execute(std::span<const uint8_t> cdb,
			    std::span<const data_segment> data);

private:
	scsi_result read_write(uint64_t lba, uint32_t blocks, bool write,
			       std::span<const data_segment> data);
	scsi_result inquiry(std::span<const uint8_t> cdb,
			    std::span<const data_segment> data);
	scsi_result read_capacity_10(std::span<const data_segment> data);
	scsi_result read_capacity_16(std::span<const uint8_t> cdb,
				     std::span<const data_segment> data);
	scsi_result mode_sense(std::span<const uint8_t> cdb,
			       std::span<const data_segment> data);

	uint8_t *data_ = nullptr;
	uint64_t bytes_ = 0;
	uint64_t blocks_ = 0;
};

// CHECK CONDITION with fixed-format sense: key, additional sense code.
scsi_result check_condition(uint8_t key, uint8_t asc);
inline constexpr uint8_t ILLEGAL_REQUEST = 0x05;
inline constexpr uint8_t ASC_INVALID_FIELD_IN_CDB = 0x24;

// Length of a CDB from its operation code group, 0 if the group is reserved
// or vendor specific (we do not accept those).
size_t cdb_length(uint8_t opcode);

}  // namespace kmod_client
