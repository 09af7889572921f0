// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The SCSI standard's own numbers (SPC-5, SBC-4) that the SCSI layer speaks:
// operation codes, status codes, sense keys and additional sense codes.
#include <cstdint>

namespace tcmud::scsi {

// Operation codes (SPC-5 / SBC-4). Names follow the standards and the kernel.
enum opcode : uint8_t {
	TEST_UNIT_READY = 0x00,
	REQUEST_SENSE = 0x03,
	FORMAT_UNIT = 0x04,
	READ_6 = 0x08,
	WRITE_6 = 0x0a,
	INQUIRY = 0x12,
	MODE_SELECT_6 = 0x15,
	MODE_SENSE_6 = 0x1a,
	START_STOP_UNIT = 0x1b,
	SEND_DIAGNOSTIC = 0x1d,
	PREVENT_ALLOW_MEDIUM_REMOVAL = 0x1e,
	READ_CAPACITY_10 = 0x25,
	READ_10 = 0x28,
	WRITE_10 = 0x2a,
	WRITE_VERIFY_10 = 0x2e,
	VERIFY_10 = 0x2f,
	PRE_FETCH_10 = 0x34,
	SYNCHRONIZE_CACHE_10 = 0x35,
	READ_DEFECT_DATA_10 = 0x37,
	WRITE_SAME_10 = 0x41,
	UNMAP = 0x42,
	MODE_SELECT_10 = 0x55,
	MODE_SENSE_10 = 0x5a,
	EXTENDED_COPY = 0x83,
	RECEIVE_COPY_RESULTS = 0x84,
	READ_16 = 0x88,
	COMPARE_AND_WRITE = 0x89,
	WRITE_16 = 0x8a,
	ORWRITE_16 = 0x8b,
	WRITE_VERIFY_16 = 0x8e,
	VERIFY_16 = 0x8f,
	PRE_FETCH_16 = 0x90,
	SYNCHRONIZE_CACHE_16 = 0x91,
	WRITE_SAME_16 = 0x93,
	WRITE_ATOMIC_16 = 0x9c,
	SERVICE_ACTION_IN_16 = 0x9e,
	MAINTENANCE_IN = 0xa3,
	READ_12 = 0xa8,
	WRITE_12 = 0xaa,
	WRITE_VERIFY_12 = 0xae,
	VERIFY_12 = 0xaf,
	READ_DEFECT_DATA_12 = 0xb7,
};

// Service actions of the opcodes above that have them.
inline constexpr uint16_t SAI_READ_CAPACITY_16 = 0x10;
inline constexpr uint16_t SAI_GET_LBA_STATUS = 0x12;
inline constexpr uint16_t MI_REPORT_TARGET_PORT_GROUPS = 0x0a;
inline constexpr uint16_t MI_REPORT_SUPPORTED_OPERATION_CODES = 0x0c;

// SAM status codes.
enum status : uint8_t {
	SAM_STAT_GOOD = 0x00,
	SAM_STAT_CHECK_CONDITION = 0x02,
	SAM_STAT_CONDITION_MET = 0x04,
	SAM_STAT_BUSY = 0x08,
	SAM_STAT_TASK_SET_FULL = 0x28,
};

// Sense keys (SPC-5 table 49).
enum sense_key : uint8_t {
	NO_SENSE = 0x0,
	NOT_READY = 0x2,
	MEDIUM_ERROR = 0x3,
	HARDWARE_ERROR = 0x4,
	ILLEGAL_REQUEST = 0x5,
	UNIT_ATTENTION = 0x6,
	DATA_PROTECT = 0x7,
	COPY_ABORTED = 0xa,
	ABORTED_COMMAND = 0xb,
	MISCOMPARE = 0xe,
};

// An additional sense code and its qualifier, as one value.
struct asc_ascq {
	uint8_t asc;
	uint8_t ascq;
	friend constexpr bool operator==(asc_ascq, asc_ascq) = default;
};

inline constexpr asc_ascq ASC_NO_ADDITIONAL_SENSE{0x00, 0x00};
inline constexpr asc_ascq ASC_LOGICAL_UNIT_BECOMING_READY{0x04, 0x01};
inline constexpr asc_ascq ASC_LOGICAL_UNIT_NOT_READY_MANUAL_INTERVENTION{0x04, 0x03};
inline constexpr asc_ascq ASC_LOGICAL_UNIT_COMMUNICATION_TIMEOUT{0x08, 0x01};
inline constexpr asc_ascq ASC_WRITE_ERROR{0x0c, 0x00};
inline constexpr asc_ascq ASC_INVALID_FIELD_IN_COMMAND_IU{0x0e, 0x03};
inline constexpr asc_ascq ASC_UNRECOVERED_READ_ERROR{0x11, 0x00};
inline constexpr asc_ascq ASC_PARAMETER_LIST_LENGTH_ERROR{0x1a, 0x00};
inline constexpr asc_ascq ASC_MISCOMPARE_DURING_VERIFY{0x1d, 0x00};
inline constexpr asc_ascq ASC_INVALID_COMMAND_OPERATION_CODE{0x20, 0x00};
inline constexpr asc_ascq ASC_LBA_OUT_OF_RANGE{0x21, 0x00};
inline constexpr asc_ascq ASC_INVALID_FIELD_IN_CDB{0x24, 0x00};
inline constexpr asc_ascq ASC_INVALID_FIELD_IN_PARAMETER_LIST{0x26, 0x00};
inline constexpr asc_ascq ASC_WRITE_PROTECTED{0x27, 0x00};
inline constexpr asc_ascq ASC_SPACE_ALLOCATION_FAILED_WRITE_PROTECT{0x27, 0x07};
inline constexpr asc_ascq ASC_SAVING_PARAMETERS_NOT_SUPPORTED{0x39, 0x00};
inline constexpr asc_ascq ASC_INTERNAL_TARGET_FAILURE{0x44, 0x00};

} // namespace tcmud::scsi
