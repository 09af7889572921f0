// SPDX-License-Identifier: GPL-2.0-or-later
// TCM-USER netlink events: tcmu_netlink::parse on any generic netlink
// message from any sender (the input is the source port, then the payload
// after the nlmsghdr: genlmsghdr and attributes), differential against a
// small attribute walker written here.
//
// Oracles: parse never reads outside the message (sanitizers); it accepts
// nothing a process other than the kernel (source port 0) sent; an event it
// accepts carries the command byte of the genl header and exactly the
// values of the last DEVICE, MINOR, DEVICE_ID, DEV_CFG, DEV_SIZE and
// WRITECACHE attributes in the bytes, each of the size its type needs; an
// event is never accepted without DEVICE, MINOR and DEVICE_ID.
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "netlink/tcmu_genl_abi.h"
#include "netlink/tcmu_netlink.h"

using namespace tcmud;
using tcmud::fuzz::input;

namespace {

struct walked {
	bool framed = true; // every attribute header and length is sound
	std::optional<std::vector<uint8_t>> attr[TCMUD_ATTR_MAX + 1];
};

walked walk(std::span<const uint8_t> attrs)
{
	walked w;
	while (attrs.size() >= NLA_HDRLEN) {
		uint16_t len, type;
		std::memcpy(&len, attrs.data(), 2);
		std::memcpy(&type, attrs.data() + 2, 2);
		if (len < NLA_HDRLEN || len > attrs.size()) {
			w.framed = false;
			break;
		}
		type &= NLA_TYPE_MASK;
		if (type <= TCMUD_ATTR_MAX)
			w.attr[type] = std::vector<uint8_t>(attrs.begin() + NLA_HDRLEN, attrs.begin() + len);
		size_t step = NLA_ALIGN(len);
		attrs = attrs.subspan(std::min(step, attrs.size()));
	}
	return w;
}

template <typename T>
std::optional<T> value_of(const std::optional<std::vector<uint8_t>> &a)
{
	if (!a || a->size() < sizeof(T))
		return std::nullopt;
	T v;
	std::memcpy(&v, a->data(), sizeof(T));
	return v;
}

std::optional<std::string> string_of(const std::optional<std::vector<uint8_t>> &a)
{
	if (!a)
		return std::nullopt;
	const auto *p = reinterpret_cast<const char *>(a->data());
	return std::string(p, strnlen(p, a->size()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input in(data, size);
	// The sender: the kernel (port 0), or a local process, which can send
	// to the daemon's event socket as well.
	uint32_t sender = in.flag() ? in.u32() : 0;
	uint16_t type = in.u16();
	std::span<const uint8_t> payload = in.rest();
	if (payload.size() > 65000)
		return 0;
	std::vector<uint8_t> buf(NLMSG_HDRLEN + payload.size());
	nlmsghdr h{};
	h.nlmsg_len = uint32_t(buf.size());
	h.nlmsg_type = type;
	std::memcpy(buf.data(), &h, sizeof(h));
	std::memcpy(buf.data() + NLMSG_HDRLEN, payload.data(), payload.size());
	nl_msg *msg = nlmsg_convert(reinterpret_cast<nlmsghdr *>(buf.data()));
	FUZZ_CHECK(msg != nullptr, "nlmsg_convert failed");
	sockaddr_nl src{};
	src.nl_family = AF_NETLINK;
	src.nl_pid = sender;
	nlmsg_set_src(msg, &src);
	auto ev = tcmu_netlink::parse(msg);
	nlmsg_free(msg);
	if (!ev)
		return 0;

	FUZZ_CHECK(sender == 0, "an event accepted from a sender other than the kernel");

	FUZZ_CHECK(payload.size() >= GENL_HDRLEN, "an event from a message without a genl header");
	FUZZ_CHECK(ev->cmd == payload[0], "the command is not the genl header's");
	walked w = walk(payload.subspan(GENL_HDRLEN));
	FUZZ_CHECK(w.attr[TCMUD_ATTR_DEVICE] && w.attr[TCMUD_ATTR_MINOR] &&
			   w.attr[TCMUD_ATTR_DEVICE_ID],
		   "an event accepted without DEVICE, MINOR and DEVICE_ID");
	FUZZ_CHECK(string_of(w.attr[TCMUD_ATTR_DEVICE]) == ev->uio_name, "DEVICE differs");
	FUZZ_CHECK(value_of<uint32_t>(w.attr[TCMUD_ATTR_MINOR]) == ev->minor,
		   "MINOR differs or is too short");
	FUZZ_CHECK(value_of<uint32_t>(w.attr[TCMUD_ATTR_DEVICE_ID]) == ev->device_id,
		   "DEVICE_ID differs or is too short");
	FUZZ_CHECK(string_of(w.attr[TCMUD_ATTR_DEV_CFG]) == ev->dev_cfg, "DEV_CFG differs");
	FUZZ_CHECK(value_of<uint64_t>(w.attr[TCMUD_ATTR_DEV_SIZE]) == ev->dev_size,
		   "DEV_SIZE differs or is too short");
	FUZZ_CHECK(value_of<uint8_t>(w.attr[TCMUD_ATTR_WRITECACHE]) == ev->write_cache,
		   "WRITECACHE differs or is too short");
	return 0;
}
