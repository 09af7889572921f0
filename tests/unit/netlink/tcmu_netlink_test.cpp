// SPDX-License-Identifier: GPL-2.0-or-later
// tcmu_netlink::parse: only the kernel's messages are events (issue 14 F7),
// with the attributes the kernel sends (target_core_user.c
// tcmu_netlink_event_init/_send), and a message without them is none.
#include <catch2/catch.hpp>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <optional>

#include "netlink/tcmu_genl_abi.h"
#include "netlink/tcmu_netlink.h"

using namespace tcmud;

namespace {

// The attributes every event carries (device, minor, device id), or all
// but `skip`, as the kernel puts them; from port `pid`.
nl_msg *event(uint8_t cmd, uint32_t pid = 0, int skip = 0)
{
	nl_msg *msg = nlmsg_alloc();
	REQUIRE(msg);
	REQUIRE(genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0x20, 0, 0, cmd, 2));
	if (skip != TCMUD_ATTR_DEVICE)
		REQUIRE(nla_put_string(msg, TCMUD_ATTR_DEVICE, "tcm-user/1/lun0/file//tmp/x") == 0);
	if (skip != TCMUD_ATTR_MINOR)
		REQUIRE(nla_put_u32(msg, TCMUD_ATTR_MINOR, 3) == 0);
	if (skip != TCMUD_ATTR_DEVICE_ID)
		REQUIRE(nla_put_u32(msg, TCMUD_ATTR_DEVICE_ID, 7) == 0);
	sockaddr_nl src{};
	src.nl_family = AF_NETLINK;
	src.nl_pid = pid;
	nlmsg_set_src(msg, &src);
	return msg;
}

// A well-formed ADDED_DEVICE as the kernel sends it, from port `pid`.
nl_msg *added_device(uint32_t pid)
{
	return event(TCMUD_CMD_ADDED_DEVICE, pid);
}

std::optional<tcmu_netlink_event> parsed(nl_msg *msg)
{
	auto ev = tcmu_netlink::parse(msg);
	nlmsg_free(msg);
	return ev;
}

} // namespace

TEST_CASE("a TCM-USER event from the kernel (port 0) is parsed", "[netlink]")
{
	nl_msg *msg = added_device(0);
	auto ev = tcmu_netlink::parse(msg);
	nlmsg_free(msg);
	REQUIRE(ev);
	CHECK(ev->cmd == TCMUD_CMD_ADDED_DEVICE);
	CHECK(ev->minor == 3);
	CHECK(ev->device_id == 7);
}

TEST_CASE("the same message from a user-space port is ignored", "[netlink]")
{
	nl_msg *msg = added_device(4321);
	CHECK_FALSE(tcmu_netlink::parse(msg));
	nlmsg_free(msg);
}

TEST_CASE("an ADDED_DEVICE carries the uio name and no reconfig values", "[netlink]")
{
	auto ev = parsed(added_device(0));
	REQUIRE(ev);
	CHECK(ev->uio_name == "tcm-user/1/lun0/file//tmp/x");
	CHECK_FALSE(ev->dev_cfg);
	CHECK_FALSE(ev->dev_size);
	CHECK_FALSE(ev->write_cache);
}

TEST_CASE("a RECONFIG_DEVICE's new size, cfgstring and write cache are read", "[netlink]")
{
	nl_msg *msg = event(TCMUD_CMD_RECONFIG_DEVICE);
	SECTION("dev_size") {
		REQUIRE(nla_put_u64(msg, TCMUD_ATTR_DEV_SIZE, uint64_t(5) << 32) == 0);
		auto ev = parsed(msg);
		REQUIRE(ev);
		CHECK(ev->cmd == TCMUD_CMD_RECONFIG_DEVICE);
		CHECK(ev->dev_size == uint64_t(5) << 32);
		CHECK_FALSE(ev->dev_cfg);
		CHECK_FALSE(ev->write_cache);
	}
	SECTION("dev_config") {
		REQUIRE(nla_put_string(msg, TCMUD_ATTR_DEV_CFG, "file//tmp/y;direct=1") == 0);
		auto ev = parsed(msg);
		REQUIRE(ev);
		CHECK(ev->dev_cfg == "file//tmp/y;direct=1");
		CHECK_FALSE(ev->dev_size);
	}
	SECTION("emulate_write_cache") {
		REQUIRE(nla_put_u8(msg, TCMUD_ATTR_WRITECACHE, 0) == 0);
		auto ev = parsed(msg);
		REQUIRE(ev);
		CHECK(ev->write_cache == uint8_t(0));
	}
}

TEST_CASE("an event without the device, its minor or its id is no event", "[netlink]")
{
	for (int skip : {TCMUD_ATTR_DEVICE, TCMUD_ATTR_MINOR, TCMUD_ATTR_DEVICE_ID}) {
		INFO("attribute " << skip << " left out");
		CHECK_FALSE(parsed(event(TCMUD_CMD_REMOVED_DEVICE, 0, skip)));
	}
}

TEST_CASE("an attribute shorter than its type is refused, not read past", "[netlink]")
{
	// A one-byte MINOR where the kernel sends a u32: the policy (NLA_U32)
	// refuses it, so nla_get_u32 never reads beyond the attribute.
	nl_msg *msg = event(TCMUD_CMD_ADDED_DEVICE, 0, TCMUD_ATTR_MINOR);
	REQUIRE(nla_put_u8(msg, TCMUD_ATTR_MINOR, 3) == 0);
	CHECK_FALSE(parsed(msg));
}
