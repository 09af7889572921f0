// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The mailbox at the start of a TCMU mapping: its one-time validation and the
// two fields that move (cmd_head, written by the kernel; cmd_tail, by us).
//
// Trust boundary: the kernel writes this memory and we treat it as untrusted
// input. The geometry (cmdr_off, cmdr_size) is read and checked ONCE, at
// attach, and never re-read; only cmd_head is read again, and every value of
// it is checked before use.
//
// Memory ordering: the kernel fills an entry and then store-releases cmd_head
// (smp_store_release in UPDATE_HEAD), so we load-acquire cmd_head before we
// read any entry it covers. We write responses into entries and then
// store-release cmd_tail, so the kernel, which reads cmd_tail and then the
// entries behind it, never sees a tail ahead of the responses.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ring/tcmu_abi.h"
#include "tcmud/setup_result.h"

namespace tcmud {

// Where the parts of the mapping lie, in bytes from its start. Data area:
// everything after the command ring, as the kernel lays it out
// (data_off = cmdr_off + cmdr_size).
struct ring_geometry {
	uint16_t flags = 0; // TCMUD_MB_FLAG_CAP_*
	uint32_t cmdr_off = 0;
	uint32_t cmdr_size = 0;
	size_t data_off = 0;
	size_t data_size = 0;
	// TCMU_MAILBOX_FLAG_CAP_DATA_FIXED: the data area's pages are all there
	// and never change while the device lives, so they may be pinned
	// (io_uring fixed buffers). False on stock kernels and modules, whose
	// pages come and go: registering them would corrupt data silently.
	bool data_area_fixed = false;
	// TCMU_MAILBOX_FLAG_CAP_ZERO_COPY: the mapping ends with a window of
	// window_size bytes after the data area (which then ends at
	// data_off + data_size, short of the mapping's end). Large READs may
	// point there; its pages cannot be pinned (no O_DIRECT on them) and
	// are never registered. 0 on stock kernels and modules.
	size_t window_size = 0;
};

// Checks the mailbox of `map` once, at attach: its geometry, or EPROTO and
// "unusable mailbox: " with what is wrong (the caller names the uio device).
setup_result<ring_geometry> read_mailbox(std::span<const std::byte> map);

// The refusal read_mailbox and command_ring::attach give.
setup_error unusable_mailbox(std::string_view why);

// kmod/'s multi-queue extension: with TCMU_MAILBOX_FLAG_CAP_MQ set, the
// mailbox says how many queues the device has and which one this mapping is.
struct mq_membership {
	uint16_t nr_queues = 1;
	uint16_t queue = 0;
};

// nullopt when the flag is not set (a classic one-ring device). The values
// are returned as the kernel wrote them; the caller checks them.
std::optional<mq_membership> read_mq_mailbox(std::span<const std::byte> map);

// The only two accesses to mailbox words after attach. `map` must have passed
// read_mailbox.
// Inline: each fetch round and each batch of answers uses them.
// read_mailbox checked that the mapping is aligned for atomic_ref.
inline std::atomic_ref<uint32_t> mailbox_word(std::span<std::byte> map, size_t off)
{
	return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t *>(map.data() + off));
}

inline uint32_t load_cmd_head(std::span<std::byte> map)
{
	return mailbox_word(map, TCMUD_MB_CMD_HEAD_OFF).load(std::memory_order_acquire);
}

// Relaxed: no entry we read depends on it (only we write it; a change is
// the kernel's reset, see command_ring::sync_with_kernel).
inline uint32_t load_cmd_tail(std::span<std::byte> map)
{
	return mailbox_word(map, TCMUD_MB_CMD_TAIL_OFF).load(std::memory_order_relaxed);
}

inline void store_cmd_tail(std::span<std::byte> map, uint32_t tail)
{
	mailbox_word(map, TCMUD_MB_CMD_TAIL_OFF).store(tail, std::memory_order_release);
}

} // namespace tcmud
