// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The rbd handler's cfgstring, as tcmu-runner's rbd handler accepts it so
// that saved configurations move over unchanged:
//
//   POOL/IMAGE[;conf=PATH][;id=USER][;osd_op_timeout=SECONDS]
//
// targetcli stores "rbd/POOL/IMAGE..." in configfs; the daemon strips the
// "rbd/" subtype before the handler sees it. POOL and IMAGE are Ceph names
// (no '/', ';' or '@'; snapshots are not served). Options, in any order,
// each at most once:
//   conf            ceph.conf to read (default: librados' search, which
//                   starts with $CEPH_CONF, then /etc/ceph/ceph.conf)
//   id              the cephx user without "client." (default: admin)
//   osd_op_timeout  seconds an OSD operation may take before the command
//                   fails (rados_osd_op_timeout); default 30
// Unlike tcmu-runner, an unknown option is refused rather than ignored: a
// misspelt "conf" would otherwise silently connect with another cluster's
// configuration.
#include <string>
#include <string_view>

#include "tcmud/setup_result.h"

namespace tcmud {

struct rbd_config {
	std::string pool;
	std::string image;
	std::string conf;         // "" = librados' default search
	std::string id;           // "" = admin
	unsigned osd_op_timeout = 0; // seconds; 0 = not given
};

inline constexpr unsigned rbd_default_osd_op_timeout = 30;

// The parsed string, or EINVAL and why it is malformed. Looks only at the
// text.
setup_result<rbd_config> parse_rbd_config(std::string_view cfgstring);

// handler_ops::check_config: the syntax, and that a given conf file exists.
setup_result<void> check_rbd_config(std::string_view cfgstring);

} // namespace tcmud
