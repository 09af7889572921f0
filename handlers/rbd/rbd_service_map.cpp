// SPDX-License-Identifier: GPL-2.0-or-later
#include "rbd/rbd_service_map.h"

#include <sys/utsname.h>

#include <initializer_list>
#include <string_view>
#include <utility>

namespace tcmud {

namespace {

// librados' dict encoding: key\0value\0...key\0value\0 and a final \0
// (the std::string's own terminator).
std::string dict(std::initializer_list<std::pair<std::string_view, std::string>> items)
{
	std::string out;
	for (const auto &[key, value] : items) {
		out.append(key);
		out.push_back('\0');
		out.append(value);
		out.push_back('\0');
	}
	return out;
}

} // namespace

std::string gateway_daemon_name(const rbd_config &cfg)
{
	struct utsname u {};
	const std::string host = uname(&u) == 0 ? u.nodename : "unknown";
	return host + ":" + cfg.pool + "/" + cfg.image;
}

int register_gateway(rados_t cluster, rbd_image_t image, const rbd_config &cfg)
{
	char id[64] = {};
	int r = rbd_get_id(image, id, sizeof(id));
	if (r < 0)
		return r;
	const std::string metadata = dict({{"pool_name", cfg.pool},
					   {"image_name", cfg.image},
					   {"image_id", id}});
	return rados_service_register(cluster, "tcmu-runner", gateway_daemon_name(cfg).c_str(),
				      metadata.c_str());
}

int update_gateway_status(rados_t cluster, const gateway_status &s)
{
	const std::string status = dict({{"lock_owner", s.lock_owner ? "true" : "false"},
					 {"lock_lost_cnt", std::to_string(s.lock_lost)},
					 {"conn_lost_cnt", std::to_string(s.conn_lost)},
					 {"cmd_timed_out_cnt", std::to_string(s.timed_out)}});
	return rados_service_update_status(cluster, status.c_str());
}

} // namespace tcmud
