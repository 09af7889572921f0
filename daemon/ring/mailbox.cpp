// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/mailbox.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

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

// nullptr when the command ring fits, else what is wrong with it.
const char *check_cmdr(std::span<const std::byte> map, uint32_t off, uint32_t size)
{
	if (off < TCMUD_MB_SIZE)
		return "command ring overlaps the mailbox";
	if (off % TCMUD_OP_ALIGN_SIZE || size % TCMUD_OP_ALIGN_SIZE)
		return "command ring not 8-byte aligned";
	if (size < min_cmdr_size)
		return "command ring too small";
	// 64-bit sum: off + size cannot wrap.
	if (uint64_t(off) + size > map.size())
		return "command ring outside the mapping";
	if (uint64_t(off) + size == map.size())
		return "no data area after the command ring";
	return nullptr;
}

} // namespace

setup_error unusable_mailbox(std::string_view why)
{
	return setup_error{EPROTO, "unusable mailbox: " + std::string(why)};
}

setup_result<ring_geometry> read_mailbox(std::span<const std::byte> map)
{
	auto addr = reinterpret_cast<uintptr_t>(map.data());
	if (addr % std::atomic_ref<uint32_t>::required_alignment)
		return unusable_mailbox("mapping not aligned");
	if (map.size() < TCMUD_MB_SIZE)
		return unusable_mailbox("mapping smaller than the mailbox");
	if (read_field<uint16_t>(map, TCMUD_MB_VERSION_OFF) != TCMUD_MAILBOX_VERSION)
		return unusable_mailbox("mailbox version is not 2");

	auto off = read_field<uint32_t>(map, TCMUD_MB_CMDR_OFF_OFF);
	auto size = read_field<uint32_t>(map, TCMUD_MB_CMDR_SIZE_OFF);
	if (const char *why = check_cmdr(map, off, size))
		return unusable_mailbox(why);

	ring_geometry g;
	g.flags = read_field<uint16_t>(map, TCMUD_MB_FLAGS_OFF);
	g.cmdr_off = off;
	g.cmdr_size = size;
	g.data_off = size_t(off) + size;
	g.data_size = map.size() - g.data_off;
	g.data_area_fixed = g.flags & TCMUD_MB_FLAG_CAP_DATA_FIXED;
	if (g.flags & TCMUD_MB_FLAG_CAP_ZERO_COPY) {
		// The window ends the mapping and the data area ends where it
		// starts; anything else is not the layout this flag promises.
		auto woff = read_field<uint64_t>(map, TCMUD_ZC_WINDOW_OFF_OFF);
		auto wsize = read_field<uint64_t>(map, TCMUD_ZC_WINDOW_SIZE_OFF);
		if (woff <= g.data_off || woff > map.size() || wsize != map.size() - woff)
			return unusable_mailbox("zero-copy window outside the mapping");
		g.data_size = woff - g.data_off;
		g.window_size = wsize;
	}
	return g;
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
