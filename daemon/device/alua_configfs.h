// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The ALUA target port groups of one TCMU device, read from configfs:
//   <device dir>/alua/<group>/{tg_pt_gp_id,alua_access_state,
//       alua_access_type,alua_access_status,preferred,implicit_trans_secs,
//       alua_support_*,members}
// and, for each member "<fabric>/<wwn>/tpgt_<T>/lun_<L>", its relative
// port identifier (<configfs>/target/<fabric>/<wwn>/tpgt_<T>/lun/lun_<L>/
// statistics/scsi_port/indx) and whether that portal group is enabled
// (tpgt_<T>/enable; a fabric without the file, tcm_loop, is always on).
//
// default_tg_pt_gp is left out: the kernel makes it for every device, and
// a device with no other group has no ALUA configured (tcmu-runner reads
// it the same way, so initiators see the same answer from either daemon).
// Called for INQUIRY and REPORT TARGET PORT GROUPS only: a few dozen small
// configfs reads, no caching, so a group ceph-iscsi adds after the device
// opened is seen by the next command.
#include <filesystem>

#include "device/device_roots.h"
#include "scsi/target_port_groups.h"
#include "tcmud/setup_result.h"

namespace tcmud {

setup_result<scsi::target_port_groups>
read_target_port_groups(const std::filesystem::path &device_dir, const device_roots &roots);

} // namespace tcmud
