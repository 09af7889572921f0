// SPDX-License-Identifier: GPL-2.0-or-later
// dbus_service against a private dbus-daemon, called as targetcli calls it:
// GetManagedObjects, ConfigDesc, CheckConfig, RegisterHandler; start-up
// failures (no bus, name taken, policy) and release of the name on stop.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <set>

#include "dbus/dbus_service.h"
#include "file/file_handler.h"
#include "private_bus.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

// A second handler whose name starts with "file": CheckConfig must match
// subtypes exactly, never by prefix.
const handler_ops file2_handler = {
	.subtype = "file2",
	.config_desc = "anything",
	.check_config = [](std::string_view) { return setup_result<void>(); },
	.open = nullptr,
};

const std::array<const handler_ops *, 2> test_handlers = {&file_handler, &file2_handler};

struct client {
	GDBusConnection *connection;
	explicit client(const private_bus &bus) : connection(connect_client(bus.address())) {}
	~client() { g_object_unref(connection); }
};

struct check_result {
	bool valid = false;
	std::string message;
};

check_result check_config(const client &c, const char *subtype, const std::string &configstr)
{
	std::string path = std::string("/org/kernel/TCMUService1/") + subtype;
	GVariant *reply = call(c.connection, path.c_str(), "org.kernel.TCMUService1", "CheckConfig",
			       g_variant_new("(s)", configstr.c_str()), "(bs)");
	REQUIRE(reply);
	check_result r;
	gboolean valid = FALSE;
	const gchar *message = nullptr;
	g_variant_get(reply, "(b&s)", &valid, &message);
	r.valid = valid;
	r.message = message;
	g_variant_unref(reply);
	return r;
}

std::unique_ptr<dbus_service> start_service(const private_bus &bus)
{
	auto svc = dbus_service::start(test_handlers, bus.address());
	INFO((svc ? "" : svc.error().what()));
	REQUIRE(svc);
	return std::move(*svc);
}

struct temp_file {
	std::string path;
	temp_file()
	{
		char tmpl[] = "/tmp/tcmud-dbus-file-XXXXXX";
		int fd = mkstemp(tmpl);
		REQUIRE(fd >= 0);
		REQUIRE(ftruncate(fd, 1 << 20) == 0);
		close(fd);
		path = tmpl;
	}
	~temp_file() { unlink(path.c_str()); }
};

bool name_has_owner(const client &c)
{
	GError *error = nullptr;
	GVariant *reply = g_dbus_connection_call_sync(
		c.connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
		"org.freedesktop.DBus", "NameHasOwner", g_variant_new("(s)", "org.kernel.TCMUService1"),
		G_VARIANT_TYPE("(b)"), G_DBUS_CALL_FLAGS_NONE, 10000, nullptr, &error);
	REQUIRE(reply);
	gboolean owned = FALSE;
	g_variant_get(reply, "(b)", &owned);
	g_variant_unref(reply);
	return owned;
}

} // namespace

TEST_CASE("GetManagedObjects lists one object per handler with its ConfigDesc", "[dbus]")
{
	private_bus bus;
	auto svc = start_service(bus);
	client c(bus);
	GVariant *reply = call(c.connection, "/org/kernel/TCMUService1",
			       "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", nullptr,
			       "(a{oa{sa{sv}}})");
	REQUIRE(reply);
	GVariantIter *objects = nullptr;
	g_variant_get(reply, "(a{oa{sa{sv}}})", &objects);
	const gchar *path = nullptr;
	GVariant *interfaces = nullptr;
	std::set<std::string> paths;
	while (g_variant_iter_loop(objects, "{&o@a{sa{sv}}}", &path, &interfaces)) {
		paths.insert(path);
		GVariant *props = g_variant_lookup_value(interfaces, "org.kernel.TCMUService1",
							 G_VARIANT_TYPE("a{sv}"));
		REQUIRE(props);
		const gchar *desc = nullptr;
		CHECK(g_variant_lookup(props, "ConfigDesc", "&s", &desc));
		if (std::string(path).ends_with("/file"))
			CHECK(desc == std::string(file_handler.config_desc));
		g_variant_unref(props);
	}
	g_variant_iter_free(objects);
	g_variant_unref(reply);
	// HandlerManager1 is not managed: targetcli would list it as a backstore.
	CHECK(paths == std::set<std::string>{"/org/kernel/TCMUService1/file",
					     "/org/kernel/TCMUService1/file2"});
}

TEST_CASE("ConfigDesc is readable through org.freedesktop.DBus.Properties", "[dbus]")
{
	private_bus bus;
	auto svc = start_service(bus);
	client c(bus);
	GVariant *reply = call(c.connection, "/org/kernel/TCMUService1/file",
			       "org.freedesktop.DBus.Properties", "Get",
			       g_variant_new("(ss)", "org.kernel.TCMUService1", "ConfigDesc"), "(v)");
	REQUIRE(reply);
	GVariant *value = nullptr;
	g_variant_get(reply, "(v)", &value);
	CHECK(g_variant_get_string(value, nullptr) == std::string(file_handler.config_desc));
	g_variant_unref(value);
	g_variant_unref(reply);
}

TEST_CASE("CheckConfig accepts an existing writable file for the file handler", "[dbus]")
{
	private_bus bus;
	auto svc = start_service(bus);
	client c(bus);
	temp_file f;
	check_result r = check_config(c, "file", "file/" + f.path);
	CHECK(r.valid);
	CHECK(r.message == "success");
}

TEST_CASE("CheckConfig refuses a missing file and names it", "[dbus]")
{
	private_bus bus;
	auto svc = start_service(bus);
	client c(bus);
	check_result r = check_config(c, "file", "file//nonexistent/disk.img");
	CHECK_FALSE(r.valid);
	CHECK(r.message.find("/nonexistent/disk.img") != std::string::npos);
	CHECK(r.message.find("No such file") != std::string::npos);
}

TEST_CASE("CheckConfig refuses a configstr for another subtype, matching exactly", "[dbus]")
{
	private_bus bus;
	auto svc = start_service(bus);
	client c(bus);
	temp_file f;
	check_result r = check_config(c, "file", "file2/" + f.path);
	CHECK_FALSE(r.valid);
	CHECK(r.message.find("not for handler file") != std::string::npos);
	// "file/..." is no more acceptable to file2 than "file2/..." to file.
	r = check_config(c, "file2", "file/" + f.path);
	CHECK_FALSE(r.valid);
	CHECK(r.message.find("not for handler file2") != std::string::npos);
	r = check_config(c, "file", f.path);
	CHECK_FALSE(r.valid);
}

TEST_CASE("RegisterHandler is refused: handlers are built in", "[dbus]")
{
	private_bus bus;
	auto svc = start_service(bus);
	client c(bus);
	GVariant *reply = call(c.connection, "/org/kernel/TCMUService1/HandlerManager1",
			       "org.kernel.TCMUService1.HandlerManager1", "RegisterHandler",
			       g_variant_new("(ss)", "qcow", "a qcow2 image"), "(bs)");
	REQUIRE(reply);
	gboolean ok = TRUE;
	const gchar *message = nullptr;
	g_variant_get(reply, "(b&s)", &ok, &message);
	CHECK_FALSE(ok);
	CHECK(std::string(message).find("external handlers are not supported") != std::string::npos);
	g_variant_unref(reply);
}

TEST_CASE("ChangeMedium answers -EOPNOTSUPP with a reason", "[dbus]")
{
	private_bus bus;
	auto svc = start_service(bus);
	client c(bus);
	GVariant *reply = call(c.connection, "/org/kernel/TCMUService1/file", "org.kernel.TCMUService1",
			       "ChangeMedium", g_variant_new("(sts)", "disk0", guint64(1 << 20), "file//x"),
			       "(is)");
	REQUIRE(reply);
	gint32 rc = 0;
	const gchar *message = nullptr;
	g_variant_get(reply, "(i&s)", &rc, &message);
	CHECK(rc == -EOPNOTSUPP);
	CHECK(std::string(message).find("re-create") != std::string::npos);
	g_variant_unref(reply);
}

TEST_CASE("start fails with -ENOTCONN and names the address when there is no bus", "[dbus]")
{
	auto svc = dbus_service::start(test_handlers, "unix:path=/nonexistent/tcmud-test-bus");
	REQUIRE_FALSE(svc);
	CHECK(svc.error().error == ENOTCONN);
	CHECK(svc.error().message.find("/nonexistent/tcmud-test-bus") != std::string::npos);
}

TEST_CASE("a second service on the same bus fails with -EEXIST", "[dbus]")
{
	private_bus bus;
	auto first = start_service(bus);
	auto second = dbus_service::start(test_handlers, bus.address());
	REQUIRE_FALSE(second);
	CHECK(second.error().error == EEXIST);
	CHECK(second.error().message.find("owned by another process") != std::string::npos);
}

TEST_CASE("stop releases the name and a new service can take it", "[dbus]")
{
	private_bus bus;
	client c(bus);
	auto svc = start_service(bus);
	CHECK(name_has_owner(c));
	svc->stop();
	svc->stop(); // idempotent
	CHECK_FALSE(name_has_owner(c));
	svc = start_service(bus);
	CHECK(name_has_owner(c));
}

namespace {

// The system bus's own default policy (Debian's system.conf: everything
// denied unless a service's file allows it) plus our policy file.
std::string system_like_policy()
{
	return "<policy context=\"default\">"
	       "<allow user=\"*\"/>"
	       "<deny own=\"*\"/><deny send_type=\"method_call\"/>"
	       "<allow send_type=\"signal\"/>"
	       "<allow send_requested_reply=\"true\" send_type=\"method_return\"/>"
	       "<allow send_requested_reply=\"true\" send_type=\"error\"/>"
	       "<allow receive_type=\"method_call\"/><allow receive_type=\"method_return\"/>"
	       "<allow receive_type=\"error\"/><allow receive_type=\"signal\"/>"
	       "<allow send_destination=\"org.freedesktop.DBus\" "
	       "send_interface=\"org.freedesktop.DBus\"/>"
	       "</policy>\n"
	       "<include>" TCMUD_DBUS_POLICY "</include>\n";
}

// Runs gdbus as user nobody; returns its exit status and, in *output, what
// it printed (the reply, or the error's name and message).
int call_as_nobody(const private_bus &bus, const std::string &object, const std::string &method,
		   const std::string &args, std::string *output = nullptr)
{
	std::string cmd = "setpriv --reuid=65534 --regid=65534 --clear-groups gdbus call --address '" +
			  bus.address() + "' --dest org.kernel.TCMUService1 --object-path " + object +
			  " --method " + method + " " + args + " 2>&1";
	FILE *p = popen(cmd.c_str(), "r");
	REQUIRE(p);
	char buf[512];
	std::string out;
	while (fgets(buf, sizeof(buf), p))
		out += buf;
	int status = pclose(p);
	if (output)
		*output = out;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// What tcmu-runner's package leaves in /etc/dbus-1/system.d when tcmud
// replaces it without a purge (its conffile stays): in the default context,
// anyone may send anything to org.kernel.TCMUService1. The bus reads it
// after /usr/share/dbus-1/system.d, so it overrides tcmud's own policy.
const char *tcmu_runner_leftover_policy =
	"<policy user=\"root\"><allow own=\"org.kernel.TCMUService1\"/></policy>"
	"<policy context=\"default\">"
	"<allow send_destination=\"org.kernel.TCMUService1\"/>"
	"<allow own_prefix=\"org.kernel.TCMUService1.HandlerManager1\"/>"
	"<allow send_interface=\"org.kernel.TCMUService1\"/>"
	"</policy>\n";

} // namespace

TEST_CASE("policy file: root owns the name; others may list handlers but not CheckConfig",
	  "[dbus][policy]")
{
	private_bus bus(system_like_policy());
	auto started = dbus_service::start(test_handlers, bus.address());
	if (geteuid() != 0) {
		REQUIRE_FALSE(started);
		CHECK(started.error().error == EACCES);
		CHECK(started.error().message.find("org.kernel.TCMUService1.conf") != std::string::npos);
		return;
	}
	INFO((started ? "" : started.error().what()));
	REQUIRE(started);
	auto svc = std::move(*started);
	client root(bus);
	check_result r = check_config(root, "file", "file//nonexistent");
	CHECK_FALSE(r.valid);
	CHECK(call_as_nobody(bus, "/org/kernel/TCMUService1",
			     "org.freedesktop.DBus.ObjectManager.GetManagedObjects", "") == 0);
	CHECK(call_as_nobody(bus, "/org/kernel/TCMUService1/file",
			     "org.freedesktop.DBus.Properties.Get",
			     "org.kernel.TCMUService1 ConfigDesc") == 0);
	CHECK(call_as_nobody(bus, "/org/kernel/TCMUService1/file",
			     "org.kernel.TCMUService1.CheckConfig", "file//etc/shadow") != 0);
	CHECK(call_as_nobody(bus, "/org/kernel/TCMUService1/HandlerManager1",
			     "org.kernel.TCMUService1.HandlerManager1.RegisterHandler", "x y") != 0);
}

TEST_CASE("CheckConfig stays root's when tcmu-runner's leftover policy lets anyone call",
	  "[dbus][policy]")
{
	if (geteuid() != 0) {
		WARN("not root: cannot call as another user");
		return;
	}
	// Both bus policies: tcmu-runner's leftover, and none at all.
	for (const std::string &policy :
	     {system_like_policy() + tcmu_runner_leftover_policy,
	      std::string("<policy context=\"default\"><allow user=\"*\"/>"
			  "<allow send_destination=\"*\" eavesdrop=\"true\"/>"
			  "<allow eavesdrop=\"true\"/><allow own=\"*\"/></policy>")}) {
		INFO(policy);
		private_bus bus(policy);
		auto svc = start_service(bus);
		std::string out;
		CHECK(call_as_nobody(bus, "/org/kernel/TCMUService1/file",
				     "org.kernel.TCMUService1.CheckConfig", "file//etc/shadow",
				     &out) != 0);
		INFO(out);
		CHECK(out.find("org.freedesktop.DBus.Error.AccessDenied") != std::string::npos);
		CHECK(out.find("root only") != std::string::npos);
		// Root is still answered, and looking stays open to everyone.
		client root(bus);
		temp_file f;
		CHECK(check_config(root, "file", "file/" + f.path).valid);
		CHECK(call_as_nobody(bus, "/org/kernel/TCMUService1",
				     "org.freedesktop.DBus.ObjectManager.GetManagedObjects", "") == 0);
	}
}
