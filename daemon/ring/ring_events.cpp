// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/ring_events.h"

#include "ring/tcmu_abi.h"

namespace tcmud {

std::string_view to_string(malformed_reason r)
{
	switch (r) {
	case malformed_reason::iov_count: return "iovec array does not fit the entry";
	case malformed_reason::iov_outside_data_area: return "iovec outside the data area";
	case malformed_reason::iov_overflow: return "iovec offset + length wraps";
	case malformed_reason::cdb_outside_mapping: return "CDB outside the mapping";
	case malformed_reason::cdb_length: return "CDB longer than 260 bytes";
	case malformed_reason::tmr_count: return "TMR id count does not fit the entry";
	case malformed_reason::head_invalid: return "cmd_head outside the ring";
	case malformed_reason::zero_length: return "entry of length 0";
	case malformed_reason::bad_opcode: return "unknown entry opcode";
	case malformed_reason::beyond_head: return "entry extends past cmd_head";
	case malformed_reason::crosses_ring_end: return "entry crosses the ring end";
	case malformed_reason::short_entry: return "CMD entry too short for a response";
	case malformed_reason::duplicate_cmd_id: return "cmd_id already in flight";
	}
	return "unknown";
}

std::string_view tmr_name(uint8_t tmr_type)
{
	switch (tmr_type) {
	case TCMUD_TMR_ABORT_TASK: return "ABORT_TASK";
	case TCMUD_TMR_ABORT_TASK_SET: return "ABORT_TASK_SET";
	case TCMUD_TMR_CLEAR_ACA: return "CLEAR_ACA";
	case TCMUD_TMR_CLEAR_TASK_SET: return "CLEAR_TASK_SET";
	case TCMUD_TMR_LUN_RESET: return "LUN_RESET";
	case TCMUD_TMR_TARGET_WARM_RESET: return "TARGET_WARM_RESET";
	case TCMUD_TMR_TARGET_COLD_RESET: return "TARGET_COLD_RESET";
	case TCMUD_TMR_LUN_RESET_PRO: return "LUN_RESET_PRO";
	}
	return "UNKNOWN";
}

} // namespace tcmud
