// SPDX-License-Identifier: GPL-2.0-or-later
// The classic TCMU ring ABI (linux/target_core_user.h) restated for C++:
// the uapi header converts an integer to an enum implicitly and defines
// struct iovec itself, so a C++ file cannot include it next to libc.
// The static_asserts pin every offset this client relies on.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kmod_client {

struct tcmu_mailbox {
	uint16_t version;
	uint16_t flags;
	uint32_t cmdr_off;
	uint32_t cmdr_size;
	uint32_t cmd_head;
	alignas(64) uint32_t cmd_tail;  // updated by user space, own cache line
};
static_assert(offsetof(tcmu_mailbox, cmd_head) == 12);
static_assert(offsetof(tcmu_mailbox, cmd_tail) == 64);

inline constexpr uint32_t TCMU_OP_PAD = 0;
inline constexpr uint32_t TCMU_OP_CMD = 1;
inline constexpr uint32_t TCMU_OP_TMR = 2;
inline constexpr uint32_t TCMU_OP_MASK = 0x7;
inline constexpr size_t TCMU_SENSE_BUFFERSIZE = 96;

inline uint32_t tcmu_hdr_get_op(uint32_t len_op) { return len_op & TCMU_OP_MASK; }
inline uint32_t tcmu_hdr_get_len(uint32_t len_op) { return len_op & ~TCMU_OP_MASK; }

#pragma pack(push, 1)
struct tcmu_cmd_entry_hdr {
	uint32_t len_op;
	uint16_t cmd_id;
	uint8_t kflags;
	uint8_t uflags;
};

// The request as the kernel writes it; the iovecs (pairs of 64-bit offset
// from the mailbox and length) follow at iov_offset. The uapi header packs
// the entry but not the request struct inside its union, so cdb_off keeps
// its natural 8-byte alignment within the request: 4 bytes of padding.
struct tcmu_cmd_req {
	tcmu_cmd_entry_hdr hdr;
	uint32_t iov_cnt;
	uint32_t iov_bidi_cnt;
	uint32_t iov_dif_cnt;
	uint32_t pad0;
	uint64_t cdb_off;
	uint64_t pad1;
	uint64_t pad2;
};

// The response we write over the same slot.
struct tcmu_cmd_rsp {
	tcmu_cmd_entry_hdr hdr;
	uint8_t scsi_status;
	uint8_t pad1;
	uint16_t pad2;
	uint32_t read_len;
	uint8_t sense_buffer[TCMU_SENSE_BUFFERSIZE];
};
// A TMR notification (tmr_notification=1): the aborted commands of this
// ring follow as cmd_cnt 16-bit ids.
struct tcmu_tmr_entry {
	tcmu_cmd_entry_hdr hdr;
	uint8_t tmr_type;
	uint8_t pad1;
	uint16_t pad2;
	uint32_t cmd_cnt;
	uint64_t pad3;
	uint64_t pad4;
};
#pragma pack(pop)

inline constexpr size_t tcmu_iov_offset = sizeof(tcmu_cmd_req);
static_assert(sizeof(tcmu_cmd_entry_hdr) == 8);
// Offsets as gcc lays out struct tcmu_cmd_entry from the uapi header.
static_assert(offsetof(tcmu_cmd_req, cdb_off) == 24);
static_assert(tcmu_iov_offset == 48);
static_assert(offsetof(tcmu_cmd_rsp, sense_buffer) == 16);
static_assert(sizeof(tcmu_cmd_rsp) == 112);
static_assert(offsetof(tcmu_tmr_entry, cmd_cnt) == 12);
static_assert(sizeof(tcmu_tmr_entry) == 32);

}  // namespace kmod_client
