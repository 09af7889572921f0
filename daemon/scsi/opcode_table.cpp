// SPDX-License-Identifier: GPL-2.0-or-later
#include "opcode_table.h"

#include "emulation.h"
#include "logical_unit.h"
#include "scsi_constants.h"
#include "third_party_copy.h"

namespace tcmud::scsi {

namespace {

bool can_unmap(const logical_unit &lu)
{
	return lu.caps().discard;
}

// Usage bitmaps, per SPC-5 / SBC-4 CDB layouts. The CONTROL byte is 0x00:
// NACA is not supported (INQUIRY NORMACA = 0) and LINK is obsolete.
// Group number fields (0x1f) are accepted and ignored. Protection fields
// (RDPROTECT, WRPROTECT, VRPROTECT) are absent: there is no protection
// information, so a non-zero value must be rejected. READ's byte 1: DPO, FUA,
// RARC, obsolete FUA_NV. WRITE's: DPO, FUA, FUA_NV. VERIFY and WRITE AND
// VERIFY's: DPO, BYTCHK (2 bits).
constexpr uint8_t RD = 0x1e, WR = 0x1a, VF = 0x16, GN = 0x1f;

constexpr opcode_info table[] = {
	{TEST_UNIT_READY, 0, false, 6, {TEST_UNIT_READY, 0, 0, 0, 0, 0},
	 emulate_test_unit_ready, nullptr},
	{REQUEST_SENSE, 0, false, 6, {REQUEST_SENSE, 0x01, 0, 0, 0xff, 0},
	 emulate_request_sense, nullptr},
	// FORMAT UNIT byte 1: FMTDATA only (FMTPINFO, LONGLIST, CMPLST and the
	// list format need a parameter list); byte 4: FFMT is not supported.
	{FORMAT_UNIT, 0, false, 6, {FORMAT_UNIT, 0x10, 0, 0, 0, 0}, emulate_format_unit, nullptr},
	{READ_6, 0, false, 6, {READ_6, 0x1f, 0xff, 0xff, 0xff, 0}, emulate_read, nullptr},
	{WRITE_6, 0, false, 6, {WRITE_6, 0x1f, 0xff, 0xff, 0xff, 0}, emulate_write, nullptr},
	{INQUIRY, 0, false, 6, {INQUIRY, 0x01, 0xff, 0xff, 0xff, 0}, emulate_inquiry, nullptr},
	{MODE_SELECT_6, 0, false, 6, {MODE_SELECT_6, 0x11, 0, 0, 0xff, 0},
	 emulate_mode_select, nullptr},
	{MODE_SENSE_6, 0, false, 6, {MODE_SENSE_6, 0x08, 0xff, 0xff, 0xff, 0},
	 emulate_mode_sense, nullptr},
	{START_STOP_UNIT, 0, false, 6, {START_STOP_UNIT, 0x01, 0, 0x0f, 0xf7, 0},
	 emulate_start_stop_unit, nullptr},
	// SEND DIAGNOSTIC byte 1: SELF-TEST CODE, PF, SELFTEST; DEVOFFL and
	// UNITOFFL only matter to a test that takes the unit offline.
	{SEND_DIAGNOSTIC, 0, false, 6, {SEND_DIAGNOSTIC, 0xf7, 0, 0xff, 0xff, 0},
	 emulate_send_diagnostic, nullptr},
	{PREVENT_ALLOW_MEDIUM_REMOVAL, 0, false, 6,
	 {PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 0x03, 0},
	 emulate_prevent_allow_medium_removal, nullptr},
	{READ_CAPACITY_10, 0, false, 10,
	 {READ_CAPACITY_10, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, 0},
	 emulate_read_capacity_10, nullptr},
	{READ_10, 0, false, 10, {READ_10, RD, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 emulate_read, nullptr},
	{WRITE_10, 0, false, 10, {WRITE_10, WR, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 emulate_write, nullptr},
	{WRITE_VERIFY_10, 0, false, 10,
	 {WRITE_VERIFY_10, VF, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 emulate_write_and_verify, nullptr},
	{VERIFY_10, 0, false, 10, {VERIFY_10, VF, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 emulate_verify, nullptr},
	{SYNCHRONIZE_CACHE_10, 0, false, 10,
	 {SYNCHRONIZE_CACHE_10, 0x06, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 emulate_synchronize_cache, nullptr},
	// PRE-FETCH byte 1: IMMED.
	{PRE_FETCH_10, 0, false, 10, {PRE_FETCH_10, 0x02, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 emulate_prefetch, nullptr},
	// READ DEFECT DATA byte 2: REQ_PLIST, REQ_GLIST, DEFECT LIST FORMAT.
	{READ_DEFECT_DATA_10, 0, false, 10,
	 {READ_DEFECT_DATA_10, 0, 0x1f, 0, 0, 0, 0, 0xff, 0xff, 0}, emulate_read_defect_data,
	 nullptr},
	{WRITE_SAME_10, 0, false, 10,
	 {WRITE_SAME_10, 0x08, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 start_task<emulate_write_same>, nullptr},
	{UNMAP, 0, false, 10, {UNMAP, 0, 0, 0, 0, 0, GN, 0xff, 0xff, 0}, start_task<emulate_unmap>,
	 can_unmap},
	{MODE_SELECT_10, 0, false, 10, {MODE_SELECT_10, 0x11, 0, 0, 0, 0, 0, 0xff, 0xff, 0},
	 emulate_mode_select, nullptr},
	{MODE_SENSE_10, 0, false, 10,
	 {MODE_SENSE_10, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, 0}, emulate_mode_sense,
	 nullptr},
	// EXTENDED COPY (LID1): bytes 10-13 PARAMETER LIST LENGTH.
	{EXTENDED_COPY, xcopy::SA_EXTENDED_COPY_LID1, true, 16,
	 {EXTENDED_COPY, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 start_task<emulate_extended_copy>, nullptr},
	// RECEIVE COPY RESULTS: byte 2 LIST IDENTIFIER, 10-13 ALLOCATION LENGTH.
	{RECEIVE_COPY_RESULTS, xcopy::SA_COPY_STATUS, true, 16,
	 {RECEIVE_COPY_RESULTS, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 emulate_receive_copy_results, nullptr},
	{RECEIVE_COPY_RESULTS, xcopy::SA_OPERATING_PARAMETERS, true, 16,
	 {RECEIVE_COPY_RESULTS, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 emulate_receive_copy_results, nullptr},
	{READ_16, 0, false, 16,
	 {READ_16, RD, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, GN, 0},
	 emulate_read, nullptr},
	{COMPARE_AND_WRITE, 0, false, 16,
	 {COMPARE_AND_WRITE, WR, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0,
	  0xff, GN, 0},
	 start_task<emulate_compare_and_write>, nullptr},
	{WRITE_16, 0, false, 16,
	 {WRITE_16, WR, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, GN, 0},
	 emulate_write, nullptr},
	{ORWRITE_16, 0, false, 16,
	 {ORWRITE_16, WR, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, GN, 0},
	 start_task<emulate_orwrite>, nullptr},
	{WRITE_VERIFY_16, 0, false, 16,
	 {WRITE_VERIFY_16, VF, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, GN, 0},
	 emulate_write_and_verify, nullptr},
	{VERIFY_16, 0, false, 16,
	 {VERIFY_16, VF, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, GN, 0},
	 emulate_verify, nullptr},
	{PRE_FETCH_16, 0, false, 16,
	 {PRE_FETCH_16, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, GN, 0},
	 emulate_prefetch, nullptr},
	{SYNCHRONIZE_CACHE_16, 0, false, 16,
	 {SYNCHRONIZE_CACHE_16, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, GN, 0},
	 emulate_synchronize_cache, nullptr},
	// WRITE SAME(16) byte 1: UNMAP and NDOB; ANCHOR is not supported.
	{WRITE_SAME_16, 0, false, 16,
	 {WRITE_SAME_16, 0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, GN, 0},
	 start_task<emulate_write_same>, nullptr},
	// WRITE ATOMIC(16) byte 1: DPO, FUA; bytes 10-11 ATOMIC BOUNDARY (only
	// 0 is valid: the emulation says so), 12-13 TRANSFER LENGTH.
	{WRITE_ATOMIC_16, 0, false, 16,
	 {WRITE_ATOMIC_16, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, GN, 0},
	 start_task<emulate_write_atomic>, nullptr},
	{SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16, true, 16,
	 {SERVICE_ACTION_IN_16, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0x01, 0},
	 emulate_read_capacity_16, nullptr},
	{SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS, true, 16,
	 {SERVICE_ACTION_IN_16, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0xff, 0xff, 0xff, 0, 0},
	 emulate_get_lba_status, nullptr},
	{MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPERATION_CODES, true, 12,
	 {MAINTENANCE_IN, 0x1f, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 emulate_report_supported_opcodes, nullptr},
	{READ_12, 0, false, 12,
	 {READ_12, RD, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GN, 0}, emulate_read,
	 nullptr},
	{WRITE_12, 0, false, 12,
	 {WRITE_12, WR, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GN, 0},
	 emulate_write, nullptr},
	{WRITE_VERIFY_12, 0, false, 12,
	 {WRITE_VERIFY_12, VF, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GN, 0},
	 emulate_write_and_verify, nullptr},
	{VERIFY_12, 0, false, 12,
	 {VERIFY_12, VF, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GN, 0},
	 emulate_verify, nullptr},
	// READ DEFECT DATA(12) byte 1: REQ_PLIST, REQ_GLIST, DEFECT LIST FORMAT;
	// bytes 2-5: ADDRESS DESCRIPTOR INDEX (an empty list has none).
	{READ_DEFECT_DATA_12, 0, false, 12,
	 {READ_DEFECT_DATA_12, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 emulate_read_defect_data, nullptr},
};

constexpr std::size_t table_size = sizeof(table) / sizeof(table[0]);

// opcode -> index of its first table row, so dispatch does not scan.
constexpr auto first_row = [] {
	std::array<uint8_t, 256> index{};
	index.fill(UINT8_MAX);
	for (std::size_t i = table_size; i-- > 0;)
		index[table[i].opcode] = static_cast<uint8_t>(i);
	return index;
}();
static_assert(table_size < UINT8_MAX);
// dispatch checks a CDB against usage[] 16 bytes at a time.
static_assert([] {
	for (const opcode_info &row : table)
		if (row.cdb_length > std::tuple_size_v<decltype(row.usage)>)
			return false;
	return true;
}());
// ... and a command keeps at least those 16 bytes of its CDB.
static_assert(std::tuple_size_v<decltype(opcode_info::usage)> <= command::CDB_BYTES_KEPT);
static_assert(command::CDB_BYTES_KEPT <= max_cdb_length);

} // namespace

std::span<const opcode_info> opcode_table()
{
	return table;
}

bool opcode_has_service_action(uint8_t opcode)
{
	return opcode == SERVICE_ACTION_IN_16 || opcode == MAINTENANCE_IN ||
	       opcode == EXTENDED_COPY || opcode == RECEIVE_COPY_RESULTS;
}

const opcode_info *find_opcode(uint8_t opcode, uint16_t service_action,
			       bool *bad_service_action)
{
	*bad_service_action = false;
	if (first_row[opcode] == UINT8_MAX)
		return nullptr;
	// Rows of one opcode (one per service action) are adjacent.
	for (std::size_t i = first_row[opcode]; i < table_size && table[i].opcode == opcode; i++)
		if (!table[i].has_service_action || table[i].service_action == service_action)
			return &table[i];
	*bad_service_action = true;
	return nullptr;
}

} // namespace tcmud::scsi
