// SPDX-License-Identifier: GPL-2.0-or-later
#include "rbd/rbd_handler.h"

#include "rbd/rbd_backstore.h"
#include "rbd/rbd_config.h"

namespace tcmud {

const handler_ops rbd_handler = {
	.subtype = "rbd",
	.config_desc =
		"POOL/IMAGE[;conf=PATH][;id=USER][;osd_op_timeout=SECONDS]. A Ceph RBD "
		"image of exactly the device size. conf: ceph.conf (default: librados' "
		"search); id: cephx user without 'client.' (default admin); "
		"osd_op_timeout: seconds before an OSD request fails (default 30).",
	.check_config = check_rbd_config,
	.open = rbd_backstore::open,
};

} // namespace tcmud
