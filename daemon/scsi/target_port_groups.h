// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Asymmetric logical unit access (ALUA, SPC-5 5.16) as a user backstore
// reports it: the target port groups an administrator (or ceph-iscsi) made
// in the device's configfs alua/ directory, and which of them may write now.
//
// The kernel hands REPORT TARGET PORT GROUPS and INQUIRY to user space
// (target_core_user is a passthrough backend: only REPORT LUNS and, unless
// pgr_support, reservations stay in the kernel), but it does not say which
// port a command came in on. So, as tcmu-runner does, the port this daemon
// answers for is the one enabled on this node: a gateway exports each LUN
// through every gateway's target portal group and enables only its own.
//
// The SCSI layer only formats what it is given; daemon/device reads
// configfs and the backstore says which group holds the medium's lock.
#include <cstdint>
#include <optional>
#include <vector>

namespace tcmud::scsi {

// ASYMMETRIC ACCESS STATE (SPC-5 6.37, table 248), as configfs writes it.
enum class alua_state : uint8_t {
	active_optimized = 0x0,
	active_non_optimized = 0x1,
	standby = 0x2,
	unavailable = 0x3,
	lba_dependent = 0x4,
	offline = 0xe,
	transitioning = 0xf,
};

// The supported-states byte of a descriptor (SPC-5 table 247): T_SUP,
// O_SUP, LBD_SUP, U_SUP, S_SUP, AN_SUP, AO_SUP, bit 7 to bit 0 with bit
// 5 reserved. configfs's alua_support_* files map one to one.
namespace alua_support {
inline constexpr uint8_t TRANSITIONING = 0x80;
inline constexpr uint8_t OFFLINE = 0x40;
inline constexpr uint8_t LBA_DEPENDENT = 0x10;
inline constexpr uint8_t UNAVAILABLE = 0x08;
inline constexpr uint8_t STANDBY = 0x04;
inline constexpr uint8_t NON_OPTIMIZED = 0x02;
inline constexpr uint8_t OPTIMIZED = 0x01;
} // namespace alua_support

// INQUIRY's TPGS field (standard data byte 5, bits 5..4).
inline constexpr uint8_t TPGS_IMPLICIT = 0x1;
inline constexpr uint8_t TPGS_EXPLICIT = 0x2;

struct target_port_group {
	uint16_t id = 0;          // tg_pt_gp_id
	alua_state state = alua_state::active_optimized;
	uint8_t supported = 0;    // alua_support bits
	bool preferred = false;   // PREF
	uint8_t status = 0;       // STATUS CODE: 0 none, 1 by STPG, 2 implicit
	std::vector<uint16_t> relative_ports;  // RELATIVE TARGET PORT IDENTIFIERs
};

struct target_port_groups {
	// Empty: no group but the kernel's default, i.e. no ALUA (TPGS 0,
	// REPORT TARGET PORT GROUPS unsupported), as with tcmu-runner.
	std::vector<target_port_group> groups;
	uint8_t tpgs = 0;                  // TPGS_* bits, for INQUIRY
	bool have_local_port = false;      // an enabled port was found
	uint16_t local_group = 0;          // that port's group
	uint16_t local_relative_port = 0;  // and its identifier
	uint8_t implicit_transition_secs = 0;  // extended header, byte 5
	// The local group is configured for explicit transitions (ceph-iscsi's
	// "explicit" failover): reported implicit, since SET TARGET PORT
	// GROUPS is not implemented; the device layer warns about it.
	bool explicit_configured = false;
};

// The picture every gateway reports when one group's gateway holds the
// medium's exclusive lock (backstore::owner_port_group): that group
// active/optimized, implicitly altered; every other group that was
// configured active (ceph-iscsi's "ao" and "ano<N>") active/non-optimized,
// so an initiator may still send I/O there and so fail over or back; a
// group configured standby or worse keeps its state. No owner, or one
// that is no group of ours: the configured states as they are.
target_port_groups with_lock_owner(target_port_groups tpg, std::optional<uint16_t> owner);

} // namespace tcmud::scsi
