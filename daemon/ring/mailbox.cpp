// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/mailbox.h"

#include <atomic>
#include <cstring>

#include "ring/tcmu_abi.h"

namespace tcmud {

namespace {

template <typename T>
T read_field(std::span<const std::byte> map, size_t off)
{
	T v;
	std::memcpy(&v, map.data() + off, sizeof(v));
	return v;
}

// The smallest ring that holds one command entry and its CDB next to a PAD:
// anything smaller cannot carry a single command, so it is not a real ring.
constexpr uint32_t min_cmdr_size = 2 * TCMUD_CMD_ENTRY_SIZE;

mailbox_error check_cmdr(std::span<const std::byte> map, uint32_t off, uint32_t size)
{
	if (off < TCMUD_MB_SIZE)
		return mailbox_error::cmdr_overlaps_mailbox;
	if (off % TCMUD_OP_ALIGN_SIZE || size % TCMUD_OP_ALIGN_SIZE)
		return mailbox_error::cmdr_misaligned;
	if (size < min_cmdr_size)
		return mailbox_error::cmdr_too_small;
	// 64-bit sum: off + size cannot wrap.
	if (uint64_t(off) + size > map.size())
		return mailbox_error::cmdr_outside_mapping;
	if (uint64_t(off) + size == map.size())
		return mailbox_error::no_data_area;
	return mailbox_error::none;
}

} // namespace

std::string_view to_string(mailbox_error e)
{
	switch (e) {
	case mailbox_error::none: return "ok";
	case mailbox_error::misaligned_mapping: return "mapping not aligned";
	case mailbox_error::mapping_too_small: return "mapping smaller than the mailbox";
	case mailbox_error::bad_version: return "mailbox version is not 2";
	case mailbox_error::cmdr_overlaps_mailbox: return "command ring overlaps the mailbox";
	case mailbox_error::cmdr_misaligned: return "command ring not 8-byte aligned";
	case mailbox_error::cmdr_too_small: return "command ring too small";
	case mailbox_error::cmdr_outside_mapping: return "command ring outside the mapping";
	case mailbox_error::no_data_area: return "no data area after the command ring";
	case mailbox_error::tail_invalid: return "cmd_tail outside the command ring";
	}
	return "unknown mailbox error";
}

mailbox_error read_mailbox(std::span<const std::byte> map, ring_geometry &out)
{
	auto addr = reinterpret_cast<uintptr_t>(map.data());
	if (addr % std::atomic_ref<uint32_t>::required_alignment)
		return mailbox_error::misaligned_mapping;
	if (map.size() < TCMUD_MB_SIZE)
		return mailbox_error::mapping_too_small;
	if (read_field<uint16_t>(map, TCMUD_MB_VERSION_OFF) != TCMUD_MAILBOX_VERSION)
		return mailbox_error::bad_version;

	auto off = read_field<uint32_t>(map, TCMUD_MB_CMDR_OFF_OFF);
	auto size = read_field<uint32_t>(map, TCMUD_MB_CMDR_SIZE_OFF);
	if (auto e = check_cmdr(map, off, size); e != mailbox_error::none)
		return e;

	out.flags = read_field<uint16_t>(map, TCMUD_MB_FLAGS_OFF);
	out.cmdr_off = off;
	out.cmdr_size = size;
	out.data_off = size_t(off) + size;
	out.data_size = map.size() - out.data_off;
	return mailbox_error::none;
}

std::optional<mq_membership> read_mq_mailbox(std::span<const std::byte> map)
{
	if (map.size() < TCMUD_MB_SIZE ||
	    !(read_field<uint16_t>(map, TCMUD_MB_FLAGS_OFF) & TCMUD_MB_FLAG_CAP_MQ))
		return std::nullopt;
	return mq_membership{read_field<uint16_t>(map, TCMUD_MQ_NR_QUEUES_OFF),
			     read_field<uint16_t>(map, TCMUD_MQ_QUEUE_OFF)};
}

} // namespace tcmud
