// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The org.kernel.TCMUService1 D-Bus service: how targetcli finds tcmud's
// handlers ("user:<subtype>" backstores) and checks a cfgstring before it
// creates a device.
//
//   /org/kernel/TCMUService1                 org.freedesktop.DBus.ObjectManager
//   /org/kernel/TCMUService1/<subtype>       org.kernel.TCMUService1
//       property ConfigDesc (s)
//       CheckConfig(s "<subtype>/<cfgstring>") -> (b valid, s reason)
//       ChangeMedium(s, t, s) -> (i, s)       always -EOPNOTSUPP
//   /org/kernel/TCMUService1/HandlerManager1 org.kernel.TCMUService1.HandlerManager1
//       RegisterHandler(s, s) -> (b, s)       always false: handlers are built in
//       UnregisterHandler(s) -> (b, s)        always false
//
// The service runs its own GLib main context on its own thread; it only
// calls handler_ops::check_config and never touches a device or a ring, so
// it needs no lock shared with the data path.
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tcmud/backstore.h"
#include "tcmud/setup_result.h"

namespace tcmud {

struct dbus_connection_state;

class dbus_service {
public:
	// Connects to the bus (bus_address empty: the system bus), exports the
	// objects, owns org.kernel.TCMUService1 and starts the service thread.
	// On failure the setup_error's errno says which (ENOTCONN no bus,
	// EACCES the bus policy refused the name, EEXIST another process owns
	// it, EIO otherwise) and its message what went wrong. Logs nothing
	// itself: the caller decides how loud.
	static setup_result<std::unique_ptr<dbus_service>>
	start(std::span<const handler_ops *const> handlers, const std::string &bus_address = {});
	~dbus_service();
	dbus_service(const dbus_service &) = delete;
	dbus_service &operator=(const dbus_service &) = delete;

	// Stops the thread, unexports everything and leaves the bus (the name is
	// released with the connection). Idempotent.
	void stop();

private:
	dbus_service() = default;

	std::vector<const handler_ops *> handlers_;
	std::unique_ptr<dbus_connection_state> state_;
	std::thread thread_;
};

} // namespace tcmud
