// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/command_size_limit.h"

#include <algorithm>

#include "ring/tcmu_abi.h"
#include "tcmud/scsi_limits.h"

namespace tcmud {

namespace {

// The most bytes a CDB takes in an entry: the longest CDB, padded to the
// entry alignment as the kernel pads it (tcmu_cmd_get_base_cmd_size).
constexpr uint64_t MAX_CDB_BYTES =
	(max_cdb_length + TCMUD_OP_ALIGN_SIZE - 1) / TCMUD_OP_ALIGN_SIZE * TCMUD_OP_ALIGN_SIZE;
static_assert(MAX_CDB_BYTES == 264);

} // namespace

uint64_t max_command_data_bytes(const queue_data_area &q)
{
	if (q.block_bytes == 0)
		return 0;
	uint64_t by_data = q.data_bytes / q.block_bytes;
	// The kernel needs command_size <= cmdr_size / 2, where the entry
	// holds one iovec per run of contiguous blocks: one per block at worst.
	uint64_t half_ring = q.cmdr_bytes / 2;
	uint64_t fixed = TCMUD_REQ_IOV_OFF + MAX_CDB_BYTES;
	uint64_t by_ring = half_ring > fixed ? (half_ring - fixed) / TCMUD_IOVEC_SIZE : 0;
	return std::min(by_data, by_ring) * q.block_bytes;
}

} // namespace tcmud
