// SPDX-License-Identifier: GPL-2.0-or-later
// tcmu_netlink::parse: only the kernel's messages are events (issue 14 F7).
#include <catch2/catch.hpp>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "netlink/tcmu_genl_abi.h"
#include "netlink/tcmu_netlink.h"

using namespace tcmud;

namespace {

// A well-formed ADDED_DEVICE as the kernel sends it, from port `pid`.
nl_msg *added_device(uint32_t pid)
{
	nl_msg *msg = nlmsg_alloc();
	REQUIRE(msg);
	REQUIRE(genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0x20, 0, 0,
			    TCMUD_CMD_ADDED_DEVICE, 2));
	REQUIRE(nla_put_string(msg, TCMUD_ATTR_DEVICE, "tcm-user/1/lun0/file//tmp/x") == 0);
	REQUIRE(nla_put_u32(msg, TCMUD_ATTR_MINOR, 3) == 0);
	REQUIRE(nla_put_u32(msg, TCMUD_ATTR_DEVICE_ID, 7) == 0);
	sockaddr_nl src{};
	src.nl_family = AF_NETLINK;
	src.nl_pid = pid;
	nlmsg_set_src(msg, &src);
	return msg;
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
