// SPDX-License-Identifier: GPL-2.0-or-later
// RECEIVE COPY RESULTS (SPC-4 6.18): OPERATING PARAMETERS (03h), what the
// copy manager accepts (sg_xcopy and ddpt size their segments from it), and
// COPY STATUS (00h) of a copy sent with LIST ID USAGE 00b. Every EXTENDED
// COPY has finished by the time its status is returned, so there is never
// one "in progress"; RECEIVE DATA (01h) and FAILED SEGMENT DETAILS (04h)
// have nothing to report and are invalid service actions.
#include <array>
#include <bit>

#include "byte_order.h"
#include "emulation.h"
#include "logical_unit.h"
#include "third_party_copy.h"

namespace tcmud::scsi {

namespace {

using namespace xcopy;

void operating_parameters(command &cmd, uint32_t allocation)
{
	std::array<uint8_t, 46> buf{};
	uint32_t bs = cmd.lu().block_size();
	put_be32(buf, 0, buf.size() - 4);      // AVAILABLE DATA
	buf[4] = 0x01;                         // SNLID: LIST ID USAGE 11b allowed
	put_be16(buf, 8, MAX_CSCD_DESCRIPTORS);
	put_be16(buf, 10, MAX_SEGMENT_DESCRIPTORS);
	put_be32(buf, 12, MAX_DESCRIPTOR_LIST_LENGTH);
	put_be32(buf, 16, max_segment_bytes(bs));  // MAXIMUM SEGMENT LENGTH
	put_be32(buf, 20, 0);                  // MAXIMUM INLINE DATA LENGTH
	put_be32(buf, 24, 0);                  // HELD DATA LIMIT
	put_be32(buf, 28, 0);                  // MAXIMUM STREAM DEVICE TRANSFER SIZE
	put_be16(buf, 34, TOTAL_CONCURRENT_COPIES);
	buf[36] = MAX_IDENTIFIED_COPIES;
	buf[37] = static_cast<uint8_t>(std::countr_zero(bs));  // DATA SEGMENT GRANULARITY
	buf[38] = 0;                           // INLINE DATA GRANULARITY
	buf[39] = 0;                           // HELD DATA GRANULARITY
	buf[43] = 2;                           // IMPLEMENTED DESCRIPTOR LIST LENGTH
	buf[44] = SEGMENT_BLOCK_TO_BLOCK;
	buf[45] = CSCD_IDENTIFICATION;
	finish_data_in(cmd, buf, allocation);
}

void copy_status(command &cmd, uint8_t list_id, uint32_t allocation)
{
	copy_results::result r = cmd.lu().copy_results().take(list_id);
	if (!r.held) {
		finish_invalid_cdb(cmd, 2);  // no copy held under this list ID
		return;
	}
	std::array<uint8_t, 12> buf{};
	put_be32(buf, 0, 8);
	buf[4] = r.status;  // HDD 0: no held data
	put_be16(buf, 5, r.segments);
	// TRANSFER COUNT in bytes (units 00h), in KiB (01h) past 32 bits.
	if (r.bytes <= UINT32_MAX) {
		put_be32(buf, 8, r.bytes);
	} else {
		buf[7] = 0x01;
		put_be32(buf, 8, std::min<uint64_t>(r.bytes >> 10, UINT32_MAX));
	}
	finish_data_in(cmd, buf, allocation);
}

} // namespace

void emulate_receive_copy_results(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	uint32_t allocation = get_be32(cdb, 10);
	if ((cdb[1] & 0x1f) == SA_OPERATING_PARAMETERS)
		operating_parameters(cmd, allocation);
	else
		copy_status(cmd, cdb[2], allocation);
}

} // namespace tcmud::scsi
