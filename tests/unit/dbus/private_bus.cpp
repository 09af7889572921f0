// SPDX-License-Identifier: GPL-2.0-or-later
#include "private_bus.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace tcmud::test {

private_bus::private_bus(const std::string &policy)
{
	char tmpl[] = "/tmp/tcmud-dbus-test-XXXXXX";
	if (!mkdtemp(tmpl))
		throw std::runtime_error("mkdtemp failed");
	dir_ = tmpl;
	// Other users reach the socket too (the policy test calls as nobody).
	chmod(tmpl, 0755);
	std::string conf = dir_ + "/bus.conf";
	std::ofstream(conf) << "<busconfig>\n<type>session</type>\n"
			       "<listen>unix:path=" << dir_ << "/socket</listen>\n"
			       "<auth>EXTERNAL</auth>\n"
			    << (policy.empty() ? "<policy context=\"default\">"
						 "<allow send_destination=\"*\" eavesdrop=\"true\"/>"
						 "<allow eavesdrop=\"true\"/>"
						 "<allow own=\"*\"/></policy>\n"
					       : policy)
			    << "</busconfig>\n";
	std::string cmd = "dbus-daemon --config-file=" + conf +
			  " --fork --nopidfile --print-address=1 --print-pid=1";
	FILE *out = popen(cmd.c_str(), "r");
	if (!out)
		throw std::runtime_error("cannot run dbus-daemon");
	char line[512];
	if (fgets(line, sizeof(line), out)) {
		address_ = line;
		while (!address_.empty() && address_.back() == '\n')
			address_.pop_back();
	}
	if (fgets(line, sizeof(line), out))
		pid_ = std::atoi(line);
	pclose(out);
	if (address_.empty() || pid_ <= 0)
		throw std::runtime_error("dbus-daemon did not start (is the dbus package installed?)");
}

private_bus::~private_bus()
{
	if (pid_ > 0)
		kill(pid_, SIGTERM);
	std::string cmd = "rm -rf " + dir_;
	if (std::system(cmd.c_str()) != 0)
		std::fprintf(stderr, "cannot remove %s\n", dir_.c_str());
}

GDBusConnection *connect_client(const std::string &address)
{
	GError *error = nullptr;
	GDBusConnection *c = g_dbus_connection_new_for_address_sync(
		address.c_str(),
		GDBusConnectionFlags(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
				     G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION),
		nullptr, nullptr, &error);
	if (!c) {
		std::string msg = error->message;
		g_error_free(error);
		throw std::runtime_error("client cannot connect: " + msg);
	}
	return c;
}

GVariant *call(GDBusConnection *c, const char *path, const char *iface, const char *method,
	       GVariant *args, const char *reply_type, std::string *error_message)
{
	GError *error = nullptr;
	GVariant *reply = g_dbus_connection_call_sync(
		c, "org.kernel.TCMUService1", path, iface, method, args,
		reply_type ? G_VARIANT_TYPE(reply_type) : nullptr, G_DBUS_CALL_FLAGS_NONE, 10000,
		nullptr, &error);
	if (!reply) {
		if (error_message)
			*error_message = error->message;
		g_error_free(error);
	}
	return reply;
}

} // namespace tcmud::test
