// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Which file a device was created with, kept across restarts of tcmud.
//
// No symbolic link is followed in a backing path (nofollow_open.h), but
// whoever may write to the file's directory can still rename another file
// over it. While tcmud serves the device it holds the old file open and the
// swap changes nothing; the danger is the next open, at a restart or a
// takeover of a device that already exists (an upgrade, a crash), which
// would serve, and with extend=1 grow, whatever the path names by then,
// with nobody watching. So at creation the handler records the device and
// inode it opened, and at a restart serves that same file or refuses
// loudly, telling how to accept an intended change.
//
// The comparison holds within one boot only: device numbers (dm, loop,
// NVMe) and some file systems' inode numbers need not survive a reboot,
// and after one the device is created anew and recorded again.
#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "tcmud/backstore.h"
#include "tcmud/setup_result.h"

namespace tcmud {

struct backing_identity {
	std::string boot_id;  // /proc/sys/kernel/random/boot_id
	uint64_t dev = 0;     // st_dev
	uint64_t ino = 0;     // st_ino
	std::string path;     // as the cfgstring names it

	bool operator==(const backing_identity &) const = default;
};

// This boot's id, or why it cannot be read.
setup_result<std::string> current_boot_id();

// The record at `record` (an absolute path), ENOENT where there is none, or
// why it cannot be used (EINVAL: it does not parse).
setup_result<backing_identity> read_backing_identity(const std::string &record);

// Replaces the record at `record` with `id` atomically: a temporary file
// beside it, written, fsynced and renamed over it. Creates the record's
// directory (mode 0700) if it is missing; not its parent.
setup_result<void> write_backing_identity(const std::string &record, const backing_identity &id);

// file_backstore::open, once the backing file is open (`st`, its fstat):
// records it for a new device; for a device taken over, compares it with the
// record of this boot for the same path and refuses another file (ESTALE).
// Nothing to do where cfg.identity_record is empty. A record that cannot be
// written or read is logged, never a refusal: the open is as safe as it
// was without records.
setup_result<void> reconcile_backing_identity(const backstore_config &cfg,
					      const std::string &path, const struct stat &st);

} // namespace tcmud
