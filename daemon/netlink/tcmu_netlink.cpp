// SPDX-License-Identifier: GPL-2.0-or-later
#include "netlink/tcmu_netlink.h"

#include "netlink/tcmu_genl_abi.h"
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <cerrno>

#include "log/log.h"

namespace tcmud {

namespace {

// Large enough that creating hundreds of devices at once (each event is
// well under 1 KiB) cannot overflow the socket before we read it.
constexpr int event_rcvbuf_bytes = 4 << 20;

nla_policy event_policy[TCMUD_ATTR_MAX + 1] = {};

void init_policy()
{
	event_policy[TCMUD_ATTR_DEVICE].type = NLA_STRING;
	event_policy[TCMUD_ATTR_MINOR].type = NLA_U32;
	event_policy[TCMUD_ATTR_DEVICE_ID].type = NLA_U32;
	event_policy[TCMUD_ATTR_DEV_CFG].type = NLA_STRING;
	event_policy[TCMUD_ATTR_DEV_SIZE].type = NLA_U64;
	event_policy[TCMUD_ATTR_WRITECACHE].type = NLA_U8;
}

int done_cmd_for(uint8_t cmd)
{
	switch (cmd) {
	case TCMUD_CMD_ADDED_DEVICE: return TCMUD_CMD_ADDED_DEVICE_DONE;
	case TCMUD_CMD_REMOVED_DEVICE: return TCMUD_CMD_REMOVED_DEVICE_DONE;
	case TCMUD_CMD_RECONFIG_DEVICE: return TCMUD_CMD_RECONFIG_DEVICE_DONE;
	default: return -1;
	}
}

} // namespace

setup_result<std::unique_ptr<tcmu_netlink>> tcmu_netlink::open(tcmu_event_callback callback)
{
	std::unique_ptr<tcmu_netlink> nl(new tcmu_netlink());
	nl->callback_ = std::move(callback);
	if (auto r = nl->setup(); !r)
		return r.error();
	return nl;
}

setup_result<void> tcmu_netlink::setup()
{
	init_policy();
	events_ = nl_socket_alloc();
	requests_ = nl_socket_alloc();
	if (!events_ || !requests_)
		return setup_error{ENOMEM, "netlink sockets"};
	if (genl_connect(events_) < 0 || genl_connect(requests_) < 0)
		return setup_error{EIO, "cannot connect a generic netlink socket"};
	family_ = genl_ctrl_resolve(requests_, TCMUD_GENL_FAMILY);
	int group = genl_ctrl_resolve_grp(requests_, TCMUD_GENL_FAMILY, TCMUD_GENL_GROUP);
	if (family_ < 0 || group < 0)
		return setup_error{ENOENT, "no TCM-USER family: is target_core_user loaded?"};
	nl_socket_disable_seq_check(events_);
	nl_socket_modify_cb(events_, NL_CB_VALID, NL_CB_CUSTOM, &tcmu_netlink::on_message, this);
	if (nl_socket_add_membership(events_, group) < 0)
		return setup_error{EIO, "cannot join the TCM-USER config group"};
	nl_socket_set_buffer_size(events_, event_rcvbuf_bytes, 0);
	nl_socket_set_nonblocking(events_);
	return set_features();
}

tcmu_netlink::~tcmu_netlink()
{
	if (events_)
		nl_socket_free(events_);
	if (requests_)
		nl_socket_free(requests_);
}

int tcmu_netlink::fd() const
{
	return nl_socket_get_fd(events_);
}

// Tells the kernel we answer every event, so configfs operations wait for
// us (and learn our verdict) instead of racing ahead of device set-up.
setup_result<void> tcmu_netlink::set_features()
{
	nl_msg *msg = nlmsg_alloc();
	if (!msg)
		return setup_error{ENOMEM, "SET_FEATURES"};
	int rc = -EMSGSIZE;
	if (genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family_, 0, 0, TCMUD_CMD_SET_FEATURES, 2) &&
	    nla_put_u8(msg, TCMUD_ATTR_SUPP_KERN_CMD_REPLY, 1) == 0)
		rc = nl_send_sync(requests_, msg); // frees msg, waits for the ACK
	else
		nlmsg_free(msg);
	if (rc < 0)
		return setup_error{EIO, std::string("SET_FEATURES refused: ") + nl_geterror(rc)};
	return {};
}

int tcmu_netlink::send_reply(const tcmu_netlink_event &ev, int status)
{
	int done = done_cmd_for(ev.cmd);
	if (done < 0)
		return -EINVAL;
	nl_msg *msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	int rc = -EMSGSIZE;
	if (genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family_, 0, 0, static_cast<uint8_t>(done), 2) &&
	    nla_put_s32(msg, TCMUD_ATTR_CMD_STATUS, status) == 0 &&
	    nla_put_u32(msg, TCMUD_ATTR_DEVICE_ID, ev.device_id) == 0)
		rc = nl_send_sync(requests_, msg);
	else
		nlmsg_free(msg);
	// The kernel answers -ENODEV when it was not waiting (reply support
	// switched off for this device with nl_reply_supported=-1): harmless.
	if (rc < 0 && rc != -NLE_OBJ_NOTFOUND)
		log_warn("netlink:", "reply to %s failed: %s", ev.uio_name.c_str(), nl_geterror(rc));
	return rc < 0 ? -EIO : 0;
}

int tcmu_netlink::answer_missed_add(uint32_t device_id, const std::string &name, int status)
{
	tcmu_netlink_event ev;
	ev.cmd = TCMUD_CMD_ADDED_DEVICE;
	ev.device_id = device_id;
	ev.uio_name = name;
	return send_reply(ev, status);
}

std::optional<tcmu_netlink_event> tcmu_netlink::parse(nl_msg *msg)
{
	init_policy();
	// Only the kernel (port 0) sends TCM-USER events. Any local process
	// can send to our port; acting on its "device added" would open and
	// serve whatever it names.
	if (sockaddr_nl *src = nlmsg_get_src(msg); src && src->nl_pid != 0)
		return std::nullopt;
	nlmsghdr *nlh = nlmsg_hdr(msg);
	auto *gh = static_cast<genlmsghdr *>(nlmsg_data(nlh));
	nlattr *attrs[TCMUD_ATTR_MAX + 1];
	if (genlmsg_parse(nlh, 0, attrs, TCMUD_ATTR_MAX, event_policy) < 0)
		return std::nullopt;
	if (!attrs[TCMUD_ATTR_DEVICE] || !attrs[TCMUD_ATTR_MINOR] || !attrs[TCMUD_ATTR_DEVICE_ID])
		return std::nullopt;
	tcmu_netlink_event ev;
	ev.cmd = gh->cmd;
	ev.uio_name = nla_get_string(attrs[TCMUD_ATTR_DEVICE]);
	ev.minor = nla_get_u32(attrs[TCMUD_ATTR_MINOR]);
	ev.device_id = nla_get_u32(attrs[TCMUD_ATTR_DEVICE_ID]);
	if (attrs[TCMUD_ATTR_DEV_CFG])
		ev.dev_cfg = nla_get_string(attrs[TCMUD_ATTR_DEV_CFG]);
	if (attrs[TCMUD_ATTR_DEV_SIZE])
		ev.dev_size = nla_get_u64(attrs[TCMUD_ATTR_DEV_SIZE]);
	if (attrs[TCMUD_ATTR_WRITECACHE])
		ev.write_cache = nla_get_u8(attrs[TCMUD_ATTR_WRITECACHE]);
	return ev;
}

int tcmu_netlink::on_message(nl_msg *msg, void *arg)
{
	auto *self = static_cast<tcmu_netlink *>(arg);
	auto ev = parse(msg);
	if (!ev) {
		log_warn("netlink:", "ignoring a TCM-USER message not from the kernel or without "
			 "device attributes");
		return NL_SKIP;
	}
	if (done_cmd_for(ev->cmd) < 0) {
		log_debug("netlink:", "ignoring TCM-USER command %u", ev->cmd);
		return NL_SKIP;
	}
	int status = self->callback_(*ev);
	self->send_reply(*ev, status);
	return NL_OK;
}

int tcmu_netlink::dispatch()
{
	for (;;) {
		int rc = nl_recvmsgs_default(events_);
		if (rc == -NLE_AGAIN || rc == 0)
			return 0;
		if (rc == -NLE_NOMEM) {
			// ENOBUFS: events were dropped. The registry re-scans sysfs.
			log_error("netlink:", "event socket overran; rescanning devices");
			return -ENOBUFS;
		}
		if (rc < 0) {
			log_error("netlink:", "receive failed: %s", nl_geterror(rc));
			return -EIO;
		}
	}
}

} // namespace tcmud
