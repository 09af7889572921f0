// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A dbus-daemon of the test's own, started from a temporary configuration,
// so the D-Bus service is tested against a real bus without the system one.
#include <gio/gio.h>

#include <string>

namespace tcmud::test {

class private_bus {
public:
	// policy: <policy> elements (and <include>s) for the configuration;
	// empty allows everything.
	explicit private_bus(const std::string &policy = {});
	~private_bus();
	private_bus(const private_bus &) = delete;
	private_bus &operator=(const private_bus &) = delete;

	const std::string &address() const { return address_; }

private:
	std::string dir_;
	std::string address_;
	int pid_ = -1;
};

// A client connection to the bus; g_object_unref it when done.
GDBusConnection *connect_client(const std::string &address);

// Calls a method synchronously; returns the reply (unref it) or nullptr and
// the error's message in *error_message.
GVariant *call(GDBusConnection *c, const char *path, const char *iface, const char *method,
	       GVariant *args, const char *reply_type, std::string *error_message = nullptr);

} // namespace tcmud::test
