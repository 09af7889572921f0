// SPDX-License-Identifier: GPL-2.0-or-later
#include "rbd/rbd_session.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

namespace tcmud {
namespace {

std::string conf_get(rados_t cluster, const char *key)
{
	char buf[512] = {};
	if (rados_conf_get(cluster, key, buf, sizeof(buf)) < 0)
		return "";
	return buf;
}

// The conf file librados reads when none is named: $CEPH_CONF, else the
// first of its usual places. Only to look for an explicit rbd cache setting.
std::string default_conf_path()
{
	if (const char *env = getenv("CEPH_CONF"); env && *env)
		return env;
	return "/etc/ceph/ceph.conf";
}

// Ceph treats ' ', '_' and '-' in option names alike.
std::string normalise_key(std::string key)
{
	for (char &c : key)
		if (c == ' ' || c == '-')
			c = '_';
	return key;
}

std::string trim(const std::string &s)
{
	size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
	return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The boolean the conf file gives KEY for this client ([global], [client]
// or [client.ID]; the last one read wins), or `otherwise` where it says
// nothing. For the settings whose default tcmud changes: librados ranks
// what the API sets above the conf file, so tcmud reads the file itself to
// leave the administrator the last word.
bool conf_flag(const std::string &path, const std::string &id, const std::string &key,
	       bool otherwise)
{
	std::ifstream in(path);
	std::string line, section;
	bool value = otherwise;
	while (std::getline(in, line)) {
		line = trim(line.substr(0, line.find_first_of("#;")));
		if (line.empty())
			continue;
		if (line.front() == '[') {
			section = trim(line.substr(1, line.find(']') - 1));
			continue;
		}
		if (section != "global" && section != "client" && section != "client." + id)
			continue;
		size_t eq = line.find('=');
		if (eq == std::string::npos || normalise_key(trim(line.substr(0, eq))) != key)
			continue;
		std::string v = trim(line.substr(eq + 1));
		value = v == "true" || v == "1" || v == "yes" || v == "on";
	}
	return value;
}

} // namespace

rbd_session::~rbd_session()
{
	if (image_)
		rbd_close(image_);
	if (ioctx_)
		rados_ioctx_destroy(ioctx_);
	if (cluster_)
		rados_shutdown(cluster_);
}

setup_result<std::unique_ptr<rbd_session>> rbd_session::open(const rbd_config &cfg)
{
	std::unique_ptr<rbd_session> s(new rbd_session());
	const std::string id = cfg.id.empty() ? "admin" : cfg.id;
	const std::string conf_shown = cfg.conf.empty() ? "the default ceph.conf search (" +
								  default_conf_path() + " first)"
							: cfg.conf;
	s->who_ = "client." + id + " with " + conf_shown;
	// librados returns -errno; setup_error's text adds strerror.
	int r = rados_create(&s->cluster_, id.c_str());
	if (r < 0)
		return setup_error{-r, "rados_create for client." + id};
	// Without conf= librados searches its usual places; finding none is
	// not an error yet (mon_host may come from the environment), so only
	// a named file must be readable.
	r = rados_conf_read_file(s->cluster_, cfg.conf.empty() ? nullptr : cfg.conf.c_str());
	if (r < 0 && !cfg.conf.empty())
		return setup_error{-r, "cannot read conf " + cfg.conf};
	rados_conf_parse_env(s->cluster_, nullptr);

	const std::string conf_path = cfg.conf.empty() ? default_conf_path() : cfg.conf;
	// librbd's cache acknowledges writes before the OSDs have them: off
	// unless the administrator asked for it in so many words.
	s->cache_enabled_ = conf_flag(conf_path, id, "rbd_cache", false);
	// librbd starts each request in the calling thread (the queue's)
	// instead of handing it to its io_context thread first: one thread
	// wake-up less per command (docs/rbd.md, "Data path"). The queue
	// thread may then wait briefly on a librbd lock or the Objecter's
	// in-flight throttle; librbd still queues requests itself while the
	// exclusive lock is being acquired. The conf may turn it back on.
	const bool non_blocking_aio = conf_flag(conf_path, id, "rbd_non_blocking_aio", false);
	const std::string timeout = std::to_string(rbd_connect_timeout);
	const std::string op_timeout = std::to_string(cfg.osd_op_timeout ? cfg.osd_op_timeout
								       : rbd_default_osd_op_timeout);
	const struct {
		const char *key;
		std::string value;
	} settings[] = {
		{"rbd_cache", s->cache_enabled_ ? "true" : "false"},
		{"rbd_non_blocking_aio", non_blocking_aio ? "true" : "false"},
		// A partial discard must zero what it covers, or LBPRZ lies.
		{"rbd_skip_partial_discard", "false"},
		{"client_mount_timeout", timeout},
		{"rados_mon_op_timeout", timeout},
		{"rados_osd_op_timeout", op_timeout},
	};
	for (const auto &setting : settings) {
		r = rados_conf_set(s->cluster_, setting.key, setting.value.c_str());
		if (r < 0)
			return setup_error{-r, std::string("cannot set ") + setting.key + "=" +
						       setting.value};
	}

	r = rados_connect(s->cluster_);
	if (r < 0) {
		std::string mons = conf_get(s->cluster_, "mon_host");
		std::string keyring = conf_get(s->cluster_, "keyring");
		setup_error e{-r, "cannot connect to the cluster as " + s->who_};
		if (mons.empty())
			e.hint = "no monitors configured (mon_host is empty: is the conf right?)";
		else if (r == -ETIMEDOUT)
			e.hint = "no monitor at " + mons + " answered within " + timeout + " s";
		else if (r == -EACCES || r == -EPERM)
			e.hint = "authentication failed: does client." + id +
				 " exist, and is its key in " + keyring + "?";
		else if (r == -ENOENT)
			e.hint = "no key for client." + id + " (keyring " + keyring + ")";
		return e;
	}
	r = rados_ioctx_create(s->cluster_, cfg.pool.c_str(), &s->ioctx_);
	if (r < 0)
		return setup_error{-r, "pool '" + cfg.pool + "' (as " + s->who_ + ")",
				   r == -ENOENT ? "no such pool" : ""};
	s->image_name_ = cfg.image;
	r = rbd_open(s->ioctx_, cfg.image.c_str(), &s->image_, nullptr);
	if (r < 0) {
		s->image_ = nullptr;
		std::string hint = r == -ENOENT ? "no such image in pool '" + cfg.pool + "'"
			: (r == -EPERM || r == -EACCES)
				? "client." + id + " may not open it (check its osd caps)"
				: "";
		return setup_error{-r, "image '" + cfg.pool + "/" + cfg.image + "'", hint};
	}
	// A pool or image override (rbd config pool/image set ... rbd_cache
	// true) wins over the conf inside librbd: what the image runs with is
	// what decides whether a FUA write needs a flush after it.
	s->cache_source_ = "the conf";
	if (auto effective = image_cache_setting(s->image_)) {
		if (*effective != s->cache_enabled_)
			s->cache_source_ = "a pool or image setting, over the conf";
		s->cache_enabled_ = *effective;
	} else {
		// Unknown: assume the cache may hold writes, and flush.
		s->cache_source_ = "librbd's setting unreadable, assumed";
		s->cache_enabled_ = true;
	}
	return s;
}

std::optional<bool> image_cache_setting(rbd_image_t image)
{
	int n = 0;
	// The first call says how many options there are (-ERANGE).
	int r = rbd_config_image_list(image, nullptr, &n);
	if (r < 0 && r != -ERANGE)
		return std::nullopt;
	std::vector<rbd_config_option_t> options(static_cast<size_t>(n));
	r = rbd_config_image_list(image, options.data(), &n);
	if (r < 0)
		return std::nullopt;
	std::optional<bool> found;
	for (int i = 0; i < n; ++i) {
		const rbd_config_option_t &o = options[static_cast<size_t>(i)];
		if (o.name && std::string_view(o.name) == "rbd_cache" && o.value)
			found = std::string_view(o.value) == "true";
	}
	rbd_config_image_list_cleanup(options.data(), n);
	return found;
}

setup_result<rbd_image_t> rbd_session::open_image() const
{
	rbd_image_t image = nullptr;
	// librbd returns -errno.
	if (int r = rbd_open(ioctx_, image_name_.c_str(), &image, nullptr); r < 0)
		return setup_error{-r, "cannot open a queue's own handle on " + image_name_};
	return image;
}

int image_lock_holder(rbd_image_t image, std::string &holder)
{
	rbd_lock_mode_t mode;
	char *owners[4] = {};
	size_t count = 4;
	int r = rbd_lock_get_owners(image, &mode, owners, &count);
	holder.clear();
	if (r == -ENOENT || (r == 0 && count == 0))
		return 0;
	if (r < 0)
		return r;
	holder = owners[0];
	rbd_lock_get_owners_cleanup(owners, count);
	return 0;
}

} // namespace tcmud
