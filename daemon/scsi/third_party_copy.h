// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The copy manager's limits (EXTENDED COPY LID1), shared by the command, by
// RECEIVE COPY RESULTS OPERATING PARAMETERS and by VPD page 0x8f, so that
// what we report is what we enforce; and the copy status held per list
// identifier for RECEIVE COPY RESULTS COPY STATUS.
#include <array>
#include <cstdint>
#include <mutex>

namespace tcmud::scsi {

namespace xcopy {

inline constexpr uint16_t MAX_CSCD_DESCRIPTORS = 16;
inline constexpr uint16_t MAX_SEGMENT_DESCRIPTORS = 64;
inline constexpr uint32_t CSCD_DESCRIPTOR_LENGTH = 32;     // E4h
inline constexpr uint32_t SEGMENT_DESCRIPTOR_LENGTH = 28;  // 02h, header included
inline constexpr uint32_t HEADER_LENGTH = 16;
inline constexpr uint32_t MAX_DESCRIPTOR_LIST_LENGTH =
	MAX_CSCD_DESCRIPTORS * CSCD_DESCRIPTOR_LENGTH +
	MAX_SEGMENT_DESCRIPTORS * SEGMENT_DESCRIPTOR_LENGTH;
// One copy moves through a bounce buffer of at most this much at a time.
inline constexpr uint32_t CHUNK_BYTES = 256 * 1024;
// Copies in flight at once: one per command slot, all queues together;
// the field is 16 bits (TOTAL CONCURRENT COPIES) / 8 bits (held list IDs).
inline constexpr uint16_t TOTAL_CONCURRENT_COPIES = 256;
inline constexpr uint8_t MAX_IDENTIFIED_COPIES = 255;

// MAXIMUM SEGMENT LENGTH: a segment's NUMBER OF BLOCKS field is 16 bits.
inline constexpr uint32_t max_segment_bytes(uint32_t block_size)
{
	return 0xffff * block_size;
}

inline constexpr uint8_t SEGMENT_BLOCK_TO_BLOCK = 0x02;
inline constexpr uint8_t CSCD_IDENTIFICATION = 0xe4;

inline constexpr uint8_t SA_EXTENDED_COPY_LID1 = 0x00;
inline constexpr uint8_t SA_COPY_STATUS = 0x00;
inline constexpr uint8_t SA_OPERATING_PARAMETERS = 0x03;

// COPY MANAGER STATUS of RECEIVE COPY RESULTS COPY STATUS.
inline constexpr uint8_t STATUS_DONE = 0x01;
inline constexpr uint8_t STATUS_DONE_WITH_ERRORS = 0x02;

} // namespace xcopy

// Results of copies whose LIST ID USAGE was 00b (hold), until RECEIVE COPY
// RESULTS COPY STATUS collects them. SPC-5 holds them per I_T nexus; TCMU
// does not say which nexus sent a command, so they are held per logical
// unit. A mutex: copies and their status are rare, never on the hot path.
class copy_results {
public:
	struct result {
		bool held = false;
		uint8_t status = 0;
		uint16_t segments = 0;
		uint64_t bytes = 0;
	};
	void hold(uint8_t list_id, const result &r)
	{
		std::lock_guard guard(mutex_);
		results_[list_id] = r;
		results_[list_id].held = true;
	}
	// Takes the held result (SPC-5: discarded once returned).
	result take(uint8_t list_id)
	{
		std::lock_guard guard(mutex_);
		result r = results_[list_id];
		results_[list_id] = {};
		return r;
	}

private:
	std::mutex mutex_;
	std::array<result, 256> results_{};
};

} // namespace tcmud::scsi
