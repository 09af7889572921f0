// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// How large a data buffer the kernel lets one command have on a queue.
//
// target_core_user refuses (INVALID FIELD IN CDB, before we ever see it) a
// command whose data, rounded up to whole data-area blocks, exceeds the
// queue's data area, or whose entry (header, one iovec per data block in the
// worst case, the CDB) exceeds half the command ring. Nothing else bounds a
// user backstore's command: passthrough_parse_cdb never checks hw_max_sectors.
// On the patched modules each queue has its own data area and ring
// (TCMU_MQ_IOC_GET_INFO's data_size); on a stock kernel the one queue has
// everything after its command ring.
#include <cstdint>

namespace tcmud {

struct queue_data_area {
	uint64_t data_bytes = 0;         // this queue's data area
	uint32_t block_bytes = 4096;     // data_pages_per_blk * page size
	uint32_t cmdr_bytes = 0;         // this queue's command ring
};

// The most data bytes one command can carry on such a queue (a multiple of
// block_bytes; 0 if the queue could not carry even one block).
uint64_t max_command_data_bytes(const queue_data_area &q);

} // namespace tcmud
