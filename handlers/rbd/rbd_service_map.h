// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A gateway's entry in the cluster's service map, where gwcli and the Ceph
// dashboard look for iSCSI gateways: service "tcmu-runner" (the name they
// read; tcmud answers for tcmu-runner there as it does on D-Bus), daemon
// "<host>:<pool>/<image>", metadata pool_name, image_name and image_id,
// and a status with lock_owner ("true"/"false"), lock_lost_cnt,
// conn_lost_cnt and cmd_timed_out_cnt, the fields tcmu-runner reports.
//
// The mgr keeps the map; without one (or with a user the mgr refuses) the
// registration only costs the client a few messages. Nothing here fails a
// device: a gateway serves whether or not a dashboard can see it.
#include <rados/librados.h>
#include <rbd/librbd.h>

#include <cstdint>
#include <string>

#include "rbd/rbd_config.h"

namespace tcmud {

struct gateway_status {
	bool lock_owner = false;
	uint64_t lock_lost = 0;
	uint64_t conn_lost = 0;
	uint64_t timed_out = 0;
};

// Once per client (each reopen makes a new one). 0, or librados' -errno.
int register_gateway(rados_t cluster, rbd_image_t image, const rbd_config &cfg);
// The status fields; the next beacon carries them to the mgr.
int update_gateway_status(rados_t cluster, const gateway_status &status);

// The daemon name: "<host>:<pool>/<image>".
std::string gateway_daemon_name(const rbd_config &cfg);

} // namespace tcmud
