// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The daemon's configuration files.
//
// /etc/tcmud/tcmud.conf, "key = value" lines ('#' starts a comment; a value
// may be put in double quotes):
//   log_level      error | warn | info | debug
//   log_dir        absolute directory for tcmud.log
//   control_socket absolute path of tcmudctl's socket, or none
//   max_in_flight  command slots per queue, 1..65535
//   uring_entries  io_uring entries per queue, 8..32768
//   max_transfer_kb  cap on a command's transfer (VPD 0xb0 MAXIMUM TRANSFER
//                  LENGTH), 4..1048576 KiB; the data area may lower it
//   dbus           true | false: offer org.kernel.TCMUService1 to targetcli
//   queue_cpus     auto | none | CPU list: where queue workers run
//                  (queue_placement.h)
//   fixed_buffers  true | false: register a queue's data area as io_uring
//                  fixed buffers where the kernel offers it (CAP_DATA_FIXED)
//   copy_groups    none | "GROUP: DEVICE DEVICE ...; ...": the devices an
//                  EXTENDED COPY may move data between (copy_groups.h)
// An unknown key, a bad value or a key given twice is an error.
//
// /etc/tcmu/tcmu.conf (tcmu-runner's) is read first, for people migrating:
// only its log_level (0..5, mapped below) and log_dir are honoured; its other
// keys belong to tcmu-runner and are ignored. tcmud.conf overrides it, and
// the command line overrides both (merge_into).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/copy_groups.h"
#include "config/queue_placement.h"
#include "log/log.h"
#include "tcmud/setup_result.h"

namespace tcmud {

// Each field is set only if a file said so.
struct daemon_config {
	std::optional<log_level> level;
	std::optional<std::string> log_dir;
	std::optional<std::string> control_socket;
	std::optional<size_t> max_in_flight;
	std::optional<unsigned> uring_entries;
	std::optional<uint64_t> max_transfer_kb;
	std::optional<bool> dbus;
	std::optional<queue_placement> queue_cpus;
	std::optional<bool> fixed_buffers;
	std::optional<copy_group_set> copy_groups;

	// Fields set in `over` replace ours.
	void merge_from(const daemon_config &over);
};

struct config_paths {
	std::string tcmud_conf = "/etc/tcmud/tcmud.conf";
	std::string tcmu_conf = "/etc/tcmu/tcmu.conf";
	bool tcmud_conf_required = false;  // true when named on the command line
};

// Parse the text of a tcmud.conf. Each problem is appended to *errors as
// "file:line: what is wrong"; returns true if there was none. Fields of *out
// are set for every valid line even when another line is bad.
bool parse_tcmud_conf(std::string_view text, std::string_view file_name, daemon_config *out,
		      std::vector<std::string> *errors);

// The same for tcmu-runner's tcmu.conf: log_level 0 CRIT and 1 ERROR become
// error, 2 warn, 3 info, 4 DEBUG and 5 DEBUG SCSI CMD become debug.
bool parse_tcmu_conf(std::string_view text, std::string_view file_name, daemon_config *out,
		     std::vector<std::string> *errors);

// control_socket's rule, for the file and --control-socket alike: "none" or
// an absolute path that fits a sockaddr_un (107 bytes). EINVAL and the
// reason if not.
setup_result<void> check_control_socket(std::string_view path);

// Reads both files (a missing file is fine unless required) and merges them:
// tcmu.conf first, tcmud.conf over it. Returns true if there was no error.
// Safe to call again on SIGHUP: it only reads files and fills *out.
bool load_daemon_config(const config_paths &paths, daemon_config *out,
			std::vector<std::string> *errors);

} // namespace tcmud
