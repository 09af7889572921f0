// SPDX-License-Identifier: GPL-2.0-or-later
#include "dbus/dbus_service.h"

#include <gio/gio.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "dbus/check_config.h"
#include "dbus/tcmu_service1.h"
#include "log/log.h"

namespace tcmud {
namespace {

constexpr const char *service_name = "org.kernel.TCMUService1";
constexpr const char *root_path = "/org/kernel/TCMUService1";
constexpr const char *handler_manager_path = "/org/kernel/TCMUService1/HandlerManager1";

// org.freedesktop.DBus.RequestName flags and replies (D-Bus specification).
constexpr guint32 name_flag_do_not_queue = 4;
constexpr guint32 name_reply_primary_owner = 1;
constexpr guint32 name_reply_exists = 3;
constexpr guint32 name_reply_already_owner = 4;

struct gobject_unref {
	void operator()(gpointer p) const { g_object_unref(p); }
};
template <class T>
using gobject_ptr = std::unique_ptr<T, gobject_unref>;

// A subtype becomes one element of an object path, so it may only use the
// characters D-Bus allows there.
bool valid_path_element(std::string_view s)
{
	if (s.empty())
		return false;
	for (char c : s)
		if (!g_ascii_isalnum(c) && c != '_')
			return false;
	return true;
}

// The caller's uid as the bus daemon knows it (from the socket's
// credentials, nothing the caller can claim); -1 when the bus does not say.
long long caller_uid(GDBusMethodInvocation *invocation)
{
	const gchar *sender = g_dbus_method_invocation_get_sender(invocation);
	if (!sender)
		return -1;
	GVariant *reply = g_dbus_connection_call_sync(
		g_dbus_method_invocation_get_connection(invocation), "org.freedesktop.DBus",
		"/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixUser",
		g_variant_new("(s)", sender), G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, 5000,
		nullptr, nullptr);
	if (!reply)
		return -1;
	guint32 uid = 0;
	g_variant_get(reply, "(u)", &uid);
	g_variant_unref(reply);
	return uid;
}

// CheckConfig opens the cfgstring's path with the daemon's (root's)
// credentials, so its answer tells whether a path exists anywhere: root's
// alone. The bus policy says so too, but a policy is only as good as every
// file in system.d: tcmu-runner's, left behind when tcmud replaces it
// without a purge, lets anyone call anything on org.kernel.TCMUService1.
// The daemon therefore decides itself, and refuses when it cannot tell.
bool refuse_unless_root(GDBusMethodInvocation *invocation, const char *method)
{
	long long uid = caller_uid(invocation);
	if (uid == 0)
		return false;
	log_warn("", "D-Bus %s from %s (uid %s) refused: only root may call it", method,
		 g_dbus_method_invocation_get_sender(invocation),
		 uid < 0 ? "unknown" : std::to_string(uid).c_str());
	g_dbus_method_invocation_return_dbus_error(
		invocation, "org.freedesktop.DBus.Error.AccessDenied",
		(std::string(method) + " is for root only: it opens the configured path with "
				       "root's credentials")
			.c_str());
	return true;
}

gboolean on_check_config(TcmudTCMUService1 *object, GDBusMethodInvocation *invocation,
			 const gchar *configstr, gpointer user_data)
{
	if (refuse_unless_root(invocation, "CheckConfig"))
		return TRUE;
	const auto *h = static_cast<const handler_ops *>(user_data);
	auto checked = check_config_string(*h, configstr);
	std::string reason = checked ? "success" : checked.error().what();
	log_debug("", "D-Bus CheckConfig(\"%s\"): %s", configstr,
		  checked ? "valid" : reason.c_str());
	tcmud_tcmuservice1_complete_check_config(object, invocation, checked.ok(), reason.c_str());
	return TRUE;
}

gboolean on_change_medium(TcmudTCMUService1 *object, GDBusMethodInvocation *invocation,
			  const gchar *, guint64, const gchar *, gpointer)
{
	tcmud_tcmuservice1_complete_change_medium(object, invocation, -EOPNOTSUPP,
		"tcmud cannot change the medium of a device; delete and re-create the backstore");
	return TRUE;
}

constexpr const char *external_handlers_reason =
	"external handlers are not supported: tcmud's handlers are built in";

gboolean on_register_handler(TcmudTCMUService1HandlerManager1 *object,
			     GDBusMethodInvocation *invocation, const gchar *subtype,
			     const gchar *, gpointer)
{
	log_info("", "D-Bus RegisterHandler(\"%s\") refused: external handlers are not supported",
		 subtype);
	tcmud_tcmuservice1_handler_manager1_complete_register_handler(object, invocation, FALSE,
								      external_handlers_reason);
	return TRUE;
}

gboolean on_unregister_handler(TcmudTCMUService1HandlerManager1 *object,
			       GDBusMethodInvocation *invocation, const gchar *, gpointer)
{
	tcmud_tcmuservice1_handler_manager1_complete_unregister_handler(
		object, invocation, FALSE, external_handlers_reason);
	return TRUE;
}

void on_connection_closed(GDBusConnection *, gboolean remote_peer_vanished, GError *error,
			  gpointer)
{
	log_warn("", "D-Bus connection closed%s: %s; targetcli cannot reach tcmud until it restarts",
		 remote_peer_vanished ? " by the bus" : "", error ? error->message : "no reason given");
}

std::string remote_error_name(GError *error)
{
	gchar *name = g_dbus_error_get_remote_error(error);
	std::string s = name ? name : "";
	g_free(name);
	return s;
}

} // namespace

// Everything GLib: created on the starting thread with the context pushed as
// its thread-default, so every callback (method calls, "closed") is
// dispatched on the service thread that later runs that context.
struct dbus_connection_state {
	GMainContext *context = g_main_context_new();
	GMainLoop *loop = g_main_loop_new(context, FALSE);
	gobject_ptr<GDBusConnection> connection;
	gulong closed_handler = 0;
	gobject_ptr<GDBusObjectManagerServer> manager;
	gobject_ptr<TcmudTCMUService1HandlerManager1> handler_manager;
	bool handler_manager_exported = false;
	bool name_owned = false;

	~dbus_connection_state();
	setup_result<void> setup(std::span<const handler_ops *const> handlers,
				 const std::string &bus_address);
	setup_result<void> connect(const std::string &bus_address);
	void export_handlers(std::span<const handler_ops *const> handlers);
	setup_result<void> export_handler_manager();
	setup_result<void> request_name();
};

// GLib reports with a GError, not errno: each step names the errno that
// fits and keeps GLib's text in the message.
setup_result<void> dbus_connection_state::setup(std::span<const handler_ops *const> handlers,
						const std::string &bus_address)
{
	if (auto connected = connect(bus_address); !connected)
		return connected;
	// Objects first, name last: a client that sees the name appear finds
	// the handlers already there.
	export_handlers(handlers);
	if (auto exported = export_handler_manager(); !exported)
		return exported;
	return request_name();
}

setup_result<void> dbus_connection_state::connect(const std::string &bus_address)
{
	g_autoptr(GError) error = nullptr;
	std::string address = bus_address;
	if (address.empty()) {
		gchar *system = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SYSTEM, nullptr, &error);
		if (!system)
			return setup_error{ENOTCONN,
					   std::string("no D-Bus system bus address: ") + error->message};
		address = system;
		g_free(system);
	}
	// A private connection, not g_bus_get()'s shared singleton, so nothing
	// else in the process depends on its context or its lifetime.
	GDBusConnection *c = g_dbus_connection_new_for_address_sync(
		address.c_str(),
		GDBusConnectionFlags(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
				     G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION),
		nullptr, nullptr, &error);
	if (!c)
		return setup_error{ENOTCONN, "cannot connect to the D-Bus bus at " + address + ": " +
						     error->message};
	connection.reset(c);
	g_dbus_connection_set_exit_on_close(c, FALSE);
	closed_handler = g_signal_connect(c, "closed", G_CALLBACK(on_connection_closed), nullptr);
	return {};
}

void dbus_connection_state::export_handlers(std::span<const handler_ops *const> handlers)
{
	manager.reset(g_dbus_object_manager_server_new(root_path));
	for (const handler_ops *h : handlers) {
		if (!valid_path_element(h->subtype)) {
			log_warn("", "handler \"%.*s\" not exported on D-Bus: a subtype there may only "
				 "use A-Z, a-z, 0-9 and _", int(h->subtype.size()), h->subtype.data());
			continue;
		}
		std::string path = std::string(root_path) + "/" + std::string(h->subtype);
		gobject_ptr<GDBusObjectSkeleton> object(g_dbus_object_skeleton_new(path.c_str()));
		gobject_ptr<TcmudTCMUService1> iface(tcmud_tcmuservice1_skeleton_new());
		tcmud_tcmuservice1_set_config_desc(iface.get(), std::string(h->config_desc).c_str());
		g_signal_connect(iface.get(), "handle-check-config", G_CALLBACK(on_check_config),
				 const_cast<handler_ops *>(h));
		g_signal_connect(iface.get(), "handle-change-medium", G_CALLBACK(on_change_medium),
				 nullptr);
		g_dbus_object_skeleton_add_interface(object.get(),
						     G_DBUS_INTERFACE_SKELETON(iface.get()));
		g_dbus_object_manager_server_export(manager.get(), object.get());
	}
	g_dbus_object_manager_server_set_connection(manager.get(), connection.get());
}

setup_result<void> dbus_connection_state::export_handler_manager()
{
	g_autoptr(GError) error = nullptr;
	handler_manager.reset(tcmud_tcmuservice1_handler_manager1_skeleton_new());
	g_signal_connect(handler_manager.get(), "handle-register-handler",
			 G_CALLBACK(on_register_handler), nullptr);
	g_signal_connect(handler_manager.get(), "handle-unregister-handler",
			 G_CALLBACK(on_unregister_handler), nullptr);
	// Exported directly, not through the object manager: targetcli lists
	// every managed object as a "user:" backstore.
	if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(handler_manager.get()),
					      connection.get(), handler_manager_path, &error))
		return setup_error{EIO, std::string("cannot export ") + handler_manager_path + ": " +
						error->message};
	handler_manager_exported = true;
	return {};
}

setup_result<void> dbus_connection_state::request_name()
{
	g_autoptr(GError) error = nullptr;
	// Synchronous, and without queueing, so start() can say at once whether
	// tcmud is the service: targetcli must not talk to a half-started one,
	// nor tcmud wait behind a tcmu-runner that owns the name.
	GVariant *reply = g_dbus_connection_call_sync(
		connection.get(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
		"org.freedesktop.DBus", "RequestName",
		g_variant_new("(su)", service_name, name_flag_do_not_queue), G_VARIANT_TYPE("(u)"),
		G_DBUS_CALL_FLAGS_NONE, 10000, nullptr, &error);
	if (!reply) {
		if (remote_error_name(error) == "org.freedesktop.DBus.Error.AccessDenied")
			return setup_error{EACCES, std::string("the bus policy does not let this "
							       "user own ") +
							   service_name + " (is " + service_name +
							   ".conf installed in /usr/share/dbus-1/"
							   "system.d?): " + error->message};
		return setup_error{EIO, std::string("cannot request the name ") + service_name +
						": " + error->message};
	}
	guint32 answer = 0;
	g_variant_get(reply, "(u)", &answer);
	g_variant_unref(reply);
	if (answer == name_reply_primary_owner || answer == name_reply_already_owner) {
		name_owned = true;
		return {};
	}
	if (answer == name_reply_exists)
		return setup_error{EEXIST, std::string(service_name) + " is owned by another "
								    "process (is tcmu-runner running?)"};
	return setup_error{EIO, "unexpected RequestName reply " + std::to_string(answer)};
}

dbus_connection_state::~dbus_connection_state()
{
	g_main_context_push_thread_default(context);
	if (handler_manager_exported)
		g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(handler_manager.get()));
	handler_manager.reset();
	if (manager)
		g_dbus_object_manager_server_set_connection(manager.get(), nullptr);
	manager.reset();
	if (name_owned) {
		// Released explicitly rather than by closing: the bus answers only
		// once the name is gone, so a successor can own it at once.
		GVariant *reply = g_dbus_connection_call_sync(
			connection.get(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
			"org.freedesktop.DBus", "ReleaseName", g_variant_new("(s)", service_name),
			G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, 2000, nullptr, nullptr);
		if (reply)
			g_variant_unref(reply);
	}
	if (connection) {
		// Leaving on purpose: no "connection closed" warning for it.
		g_signal_handler_disconnect(connection.get(), closed_handler);
		g_dbus_connection_close_sync(connection.get(), nullptr, nullptr);
		connection.reset();
	}
	// Drop what is still queued (invocations that arrived while stopping).
	while (g_main_context_iteration(context, FALSE)) {
	}
	g_main_context_pop_thread_default(context);
	g_main_loop_unref(loop);
	g_main_context_unref(context);
}

setup_result<std::unique_ptr<dbus_service>>
dbus_service::start(std::span<const handler_ops *const> handlers, const std::string &bus_address)
{
	std::unique_ptr<dbus_service> svc(new dbus_service);
	svc->handlers_.assign(handlers.begin(), handlers.end());
	auto state = std::make_unique<dbus_connection_state>();
	g_main_context_push_thread_default(state->context);
	setup_result<void> set_up = state->setup(svc->handlers_, bus_address);
	g_main_context_pop_thread_default(state->context);
	if (!set_up)
		return set_up.error();
	svc->state_ = std::move(state);
	dbus_connection_state *st = svc->state_.get();
	svc->thread_ = std::thread([st] {
		g_main_context_push_thread_default(st->context);
		g_main_loop_run(st->loop);
		g_main_context_pop_thread_default(st->context);
	});
	log_info("", "D-Bus: %s on %s, %zu handler(s)", service_name,
		 bus_address.empty() ? "the system bus" : bus_address.c_str(), handlers.size());
	return svc;
}

void dbus_service::stop()
{
	if (thread_.joinable()) {
		// Quit from inside the loop: a g_main_loop_quit() that came before
		// g_main_loop_run() started would be lost.
		GSource *quit = g_idle_source_new();
		g_source_set_callback(quit, [](gpointer loop) -> gboolean {
			g_main_loop_quit(static_cast<GMainLoop *>(loop));
			return G_SOURCE_REMOVE;
		}, state_->loop, nullptr);
		g_source_attach(quit, state_->context);
		g_source_unref(quit);
		thread_.join();
	}
	state_.reset();
}

dbus_service::~dbus_service()
{
	stop();
}

} // namespace tcmud
