// SPDX-License-Identifier: GPL-2.0-or-later
#include "opcode_table.h"

#include "emulation.h"
#include "logical_unit.h"
#include "scsi_constants.h"
#include "third_party_copy.h"

namespace tcmud::scsi {

namespace {

// Only with ALUA groups configured (a configfs read: RTPG and REPORT
// SUPPORTED OPERATION CODES are rare).
bool has_port_groups(const logical_unit &lu)
{
	return lu.reports_port_groups() && !lu.port_groups().groups.empty();
}

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
	{.opcode = TEST_UNIT_READY, .cdb_length = 6,
	 .usage = {TEST_UNIT_READY, 0, 0, 0, 0, 0},
	 .emulate = emulate_test_unit_ready},
	{.opcode = REQUEST_SENSE, .cdb_length = 6,
	 .usage = {REQUEST_SENSE, 0x01, 0, 0, 0xff, 0},
	 .emulate = emulate_request_sense},
	// FORMAT UNIT byte 1: FMTDATA only (FMTPINFO, LONGLIST, CMPLST and the
	// list format need a parameter list); byte 4: FFMT is not supported.
	{.opcode = FORMAT_UNIT, .cdb_length = 6,
	 .usage = {FORMAT_UNIT, 0x10, 0, 0, 0, 0},
	 .emulate = emulate_format_unit},
	{.opcode = READ_6, .cdb_length = 6,
	 .usage = {READ_6, 0x1f, 0xff, 0xff, 0xff, 0},
	 .emulate = emulate_read},
	{.opcode = WRITE_6, .cdb_length = 6,
	 .usage = {WRITE_6, 0x1f, 0xff, 0xff, 0xff, 0},
	 .emulate = emulate_write},
	{.opcode = INQUIRY, .cdb_length = 6,
	 .usage = {INQUIRY, 0x01, 0xff, 0xff, 0xff, 0},
	 .emulate = emulate_inquiry},
	{.opcode = MODE_SELECT_6, .cdb_length = 6,
	 .usage = {MODE_SELECT_6, 0x11, 0, 0, 0xff, 0},
	 .emulate = emulate_mode_select},
	{.opcode = MODE_SENSE_6, .cdb_length = 6,
	 .usage = {MODE_SENSE_6, 0x08, 0xff, 0xff, 0xff, 0},
	 .emulate = emulate_mode_sense},
	{.opcode = START_STOP_UNIT, .cdb_length = 6,
	 .usage = {START_STOP_UNIT, 0x01, 0, 0x0f, 0xf7, 0},
	 .emulate = emulate_start_stop_unit},
	// SEND DIAGNOSTIC byte 1: SELF-TEST CODE, PF, SELFTEST; DEVOFFL and
	// UNITOFFL only matter to a test that takes the unit offline.
	{.opcode = SEND_DIAGNOSTIC, .cdb_length = 6,
	 .usage = {SEND_DIAGNOSTIC, 0xf7, 0, 0xff, 0xff, 0},
	 .emulate = emulate_send_diagnostic},
	{.opcode = PREVENT_ALLOW_MEDIUM_REMOVAL, .cdb_length = 6,
	 .usage = {PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 0x03, 0},
	 .emulate = emulate_prevent_allow_medium_removal},
	{.opcode = READ_CAPACITY_10, .cdb_length = 10,
	 .usage = {READ_CAPACITY_10, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, 0},
	 .emulate = emulate_read_capacity_10},
	{.opcode = READ_10, .cdb_length = 10,
	 .usage = {READ_10, RD, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 .emulate = emulate_read},
	{.opcode = WRITE_10, .cdb_length = 10,
	 .usage = {WRITE_10, WR, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 .emulate = emulate_write},
	{.opcode = WRITE_VERIFY_10, .cdb_length = 10,
	 .usage = {WRITE_VERIFY_10, VF, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 .emulate = emulate_write_and_verify},
	{.opcode = VERIFY_10, .cdb_length = 10,
	 .usage = {VERIFY_10, VF, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 .emulate = emulate_verify},
	{.opcode = SYNCHRONIZE_CACHE_10, .cdb_length = 10,
	 .usage = {SYNCHRONIZE_CACHE_10, 0x06, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 .emulate = emulate_synchronize_cache},
	// PRE-FETCH byte 1: IMMED.
	{.opcode = PRE_FETCH_10, .cdb_length = 10,
	 .usage = {PRE_FETCH_10, 0x02, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 .emulate = emulate_prefetch},
	// READ DEFECT DATA byte 2: REQ_PLIST, REQ_GLIST, DEFECT LIST FORMAT.
	{.opcode = READ_DEFECT_DATA_10, .cdb_length = 10,
	 .usage = {READ_DEFECT_DATA_10, 0, 0x1f, 0, 0, 0, 0, 0xff, 0xff, 0},
	 .emulate = emulate_read_defect_data},
	{.opcode = WRITE_SAME_10, .cdb_length = 10,
	 .usage = {WRITE_SAME_10, 0x08, 0xff, 0xff, 0xff, 0xff, GN, 0xff, 0xff, 0},
	 .emulate = start_task<emulate_write_same>},
	{.opcode = UNMAP, .cdb_length = 10,
	 .usage = {UNMAP, 0, 0, 0, 0, 0, GN, 0xff, 0xff, 0},
	 .emulate = start_task<emulate_unmap>, .available = can_unmap},
	{.opcode = MODE_SELECT_10, .cdb_length = 10,
	 .usage = {MODE_SELECT_10, 0x11, 0, 0, 0, 0, 0, 0xff, 0xff, 0},
	 .emulate = emulate_mode_select},
	{.opcode = MODE_SENSE_10, .cdb_length = 10,
	 .usage = {MODE_SENSE_10, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, 0},
	 .emulate = emulate_mode_sense},
	// EXTENDED COPY (LID1): bytes 10-13 PARAMETER LIST LENGTH.
	{.opcode = EXTENDED_COPY, .service_action = xcopy::SA_EXTENDED_COPY_LID1,
	 .has_service_action = true, .cdb_length = 16,
	 .usage = {EXTENDED_COPY, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 .emulate = start_task<emulate_extended_copy>},
	// RECEIVE COPY RESULTS: byte 2 LIST IDENTIFIER, 10-13 ALLOCATION LENGTH.
	{.opcode = RECEIVE_COPY_RESULTS, .service_action = xcopy::SA_COPY_STATUS,
	 .has_service_action = true, .cdb_length = 16,
	 .usage = {RECEIVE_COPY_RESULTS, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 .emulate = emulate_receive_copy_results},
	{.opcode = RECEIVE_COPY_RESULTS, .service_action = xcopy::SA_OPERATING_PARAMETERS,
	 .has_service_action = true, .cdb_length = 16,
	 .usage = {RECEIVE_COPY_RESULTS, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 .emulate = emulate_receive_copy_results},
	{.opcode = READ_16, .cdb_length = 16,
	 .usage = {READ_16, RD, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, GN, 0},
	 .emulate = emulate_read},
	{.opcode = COMPARE_AND_WRITE, .cdb_length = 16,
	 .usage = {COMPARE_AND_WRITE, WR, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0,
		   0xff, GN, 0},
	 .emulate = start_task<emulate_compare_and_write>},
	{.opcode = WRITE_16, .cdb_length = 16,
	 .usage = {WRITE_16, WR, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, GN, 0},
	 .emulate = emulate_write},
	{.opcode = ORWRITE_16, .cdb_length = 16,
	 .usage = {ORWRITE_16, WR, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, GN, 0},
	 .emulate = start_task<emulate_orwrite>},
	{.opcode = WRITE_VERIFY_16, .cdb_length = 16,
	 .usage = {WRITE_VERIFY_16, VF, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, 0xff, GN, 0},
	 .emulate = emulate_write_and_verify},
	{.opcode = VERIFY_16, .cdb_length = 16,
	 .usage = {VERIFY_16, VF, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, GN, 0},
	 .emulate = emulate_verify},
	{.opcode = PRE_FETCH_16, .cdb_length = 16,
	 .usage = {PRE_FETCH_16, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, GN, 0},
	 .emulate = emulate_prefetch},
	{.opcode = SYNCHRONIZE_CACHE_16, .cdb_length = 16,
	 .usage = {SYNCHRONIZE_CACHE_16, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, 0xff, 0xff, GN, 0},
	 .emulate = emulate_synchronize_cache},
	// WRITE SAME(16) byte 1: UNMAP and NDOB; ANCHOR is not supported.
	{.opcode = WRITE_SAME_16, .cdb_length = 16,
	 .usage = {WRITE_SAME_16, 0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, 0xff, GN, 0},
	 .emulate = start_task<emulate_write_same>},
	// WRITE ATOMIC(16) byte 1: DPO, FUA; bytes 10-11 ATOMIC BOUNDARY (only
	// 0 is valid: the emulation says so), 12-13 TRANSFER LENGTH.
	{.opcode = WRITE_ATOMIC_16, .cdb_length = 16,
	 .usage = {WRITE_ATOMIC_16, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, 0xff, GN, 0},
	 .emulate = start_task<emulate_write_atomic>},
	{.opcode = SERVICE_ACTION_IN_16, .service_action = SAI_READ_CAPACITY_16,
	 .has_service_action = true, .cdb_length = 16,
	 .usage = {SERVICE_ACTION_IN_16, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, 0xff, 0xff, 0x01, 0},
	 .emulate = emulate_read_capacity_16},
	{.opcode = SERVICE_ACTION_IN_16, .service_action = SAI_GET_LBA_STATUS,
	 .has_service_action = true, .cdb_length = 16,
	 .usage = {SERVICE_ACTION_IN_16, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, 0xff, 0xff, 0, 0},
	 .emulate = emulate_get_lba_status},
	{.opcode = MAINTENANCE_IN, .service_action = MI_REPORT_TARGET_PORT_GROUPS,
	 .has_service_action = true, .cdb_length = 12,
	 // byte 1: PARAMETER DATA FORMAT's low bit (000b, 001b) and the SA
	 .usage = {MAINTENANCE_IN, 0x3f, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 .emulate = emulate_report_target_port_groups,
	 .available = has_port_groups},
	{.opcode = MAINTENANCE_IN, .service_action = MI_REPORT_SUPPORTED_OPERATION_CODES,
	 .has_service_action = true, .cdb_length = 12,
	 .usage = {MAINTENANCE_IN, 0x1f, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 .emulate = emulate_report_supported_opcodes},
	{.opcode = READ_12, .cdb_length = 12,
	 .usage = {READ_12, RD, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GN, 0},
	 .emulate = emulate_read},
	{.opcode = WRITE_12, .cdb_length = 12,
	 .usage = {WRITE_12, WR, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GN, 0},
	 .emulate = emulate_write},
	{.opcode = WRITE_VERIFY_12, .cdb_length = 12,
	 .usage = {WRITE_VERIFY_12, VF, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GN, 0},
	 .emulate = emulate_write_and_verify},
	{.opcode = VERIFY_12, .cdb_length = 12,
	 .usage = {VERIFY_12, VF, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GN, 0},
	 .emulate = emulate_verify},
	// READ DEFECT DATA(12) byte 1: REQ_PLIST, REQ_GLIST, DEFECT LIST FORMAT;
	// bytes 2-5: ADDRESS DESCRIPTOR INDEX (an empty list has none).
	{.opcode = READ_DEFECT_DATA_12, .cdb_length = 12,
	 .usage = {READ_DEFECT_DATA_12, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0},
	 .emulate = emulate_read_defect_data},
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

constinit const std::array<const opcode_info *, 256> plain_opcode_rows = [] {
	std::array<const opcode_info *, 256> rows{};
	for (std::size_t i = 0; i < table_size; i++) {
		const opcode_info &row = table[i];
		bool alone = (i + 1 == table_size || table[i + 1].opcode != row.opcode) &&
			     (i == 0 || table[i - 1].opcode != row.opcode);
		if (alone && !row.has_service_action)
			rows[row.opcode] = &row;
	}
	return rows;
}();

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
