// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The TCM-USER generic netlink family: how target_core_user tells a daemon
// that a device was added, removed or reconfigured, and how the daemon
// answers. Once a daemon announces reply support (TCMU_CMD_SET_FEATURES),
// the kernel blocks the configfs write that caused an event until the
// *_DONE reply for that device arrives — so every event must be answered,
// and answered with the device id the event carried.
//
// Two sockets: one joined to the "config" multicast group for events, one
// for requests that wait for the kernel's ACK. Keeping ACKs off the event
// socket means a burst of events is never interleaved with them.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tcmud/setup_result.h"

struct nl_sock;
struct nl_msg;

namespace tcmud {

struct tcmu_netlink_event {
	uint8_t cmd = 0;          // TCMU_CMD_ADDED_DEVICE / _REMOVED_ / _RECONFIG_
	std::string uio_name;     // "tcm-user/<hba>/<dev>/<subtype>/<cfgstring>"
	uint32_t minor = 0;       // /dev/uio<minor>
	uint32_t device_id = 0;   // echoed in the reply
	std::optional<std::string> dev_cfg;   // reconfig: new "subtype/cfgstring"
	std::optional<uint64_t> dev_size;     // reconfig: new size in bytes
	std::optional<uint8_t> write_cache;   // reconfig: emulate_write_cache
};

// Returns 0 to accept the event, -errno to refuse it (the kernel fails the
// configfs operation with that error).
using tcmu_event_callback = std::function<int(const tcmu_netlink_event &)>;

class tcmu_netlink {
public:
	// Resolves the family and its group, joins it, and announces reply
	// support. A setup_error (ENOENT) when target_core_user is not loaded;
	// logs nothing itself.
	static setup_result<std::unique_ptr<tcmu_netlink>> open(tcmu_event_callback callback);
	~tcmu_netlink();
	tcmu_netlink(const tcmu_netlink &) = delete;
	tcmu_netlink &operator=(const tcmu_netlink &) = delete;

	// The event socket's fd, for poll().
	int fd() const;
	// Receives every event queued on the socket, calls the callback for
	// each and sends its reply. Non-blocking; 0 or -errno.
	int dispatch();

	// Answers an ADDED_DEVICE this daemon never received: the kernel sent
	// it while no daemon listened and still waits in the device's configfs
	// enable. device_id is LIO's device index; name is for the log.
	// 0, or -errno; nothing waiting for it is not an error.
	int answer_missed_add(uint32_t device_id, const std::string &name, int status);

	// Parses one message; nullopt unless the kernel sent it (source port
	// 0) and it names a device. Exposed for the unit tests.
	static std::optional<tcmu_netlink_event> parse(nl_msg *msg);

private:
	tcmu_netlink() = default;
	setup_result<void> setup();
	int send_reply(const tcmu_netlink_event &ev, int status);
	setup_result<void> set_features();
	static int on_message(nl_msg *msg, void *arg);

	tcmu_event_callback callback_;
	nl_sock *events_ = nullptr;
	nl_sock *requests_ = nullptr;
	int family_ = -1;
};

} // namespace tcmud
