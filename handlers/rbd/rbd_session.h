// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One connection to a Ceph cluster and one open image: rados_t, the pool's
// I/O context and the rbd_image_t, closed in the reverse order exactly once.
//
// open() is bounded: a cluster that does not answer fails it within a few
// seconds (client_mount_timeout and rados_mon_op_timeout), and every failure
// says what was tried and what went wrong, in the words an administrator
// needs (pool, image, user, conf, keyring, monitors).
#include <rados/librados.h>
#include <rbd/librbd.h>

#include <memory>
#include <optional>
#include <string>

#include "rbd/rbd_config.h"
#include "tcmud/setup_result.h"

namespace tcmud {

// Seconds a connect or a monitor command may take before open() gives up.
inline constexpr unsigned rbd_connect_timeout = 5;

class rbd_session {
public:
	~rbd_session();
	rbd_session(const rbd_session &) = delete;
	rbd_session &operator=(const rbd_session &) = delete;

	// The session, or why not.
	static setup_result<std::unique_ptr<rbd_session>> open(const rbd_config &cfg);
	// Another handle on the same image through the same client (one per
	// queue, for the measurement in rbd_backstore.h), at the queue's
	// set-up: the handle, or librbd's error naming the image.
	setup_result<rbd_image_t> open_image() const;

	rbd_image_t image() const { return image_; }
	rados_t cluster() const { return cluster_; }
	// "client.admin", the conf file read (or "the default search path").
	const std::string &who() const { return who_; }
	// Whether librbd's cache is on for the image, as the opened image runs
	// with it (the conf, or a pool or image override: rbd config ... set),
	// and where that came from, for the log.
	bool cache_enabled() const { return cache_enabled_; }
	const char *cache_source() const { return cache_source_; }
	// This client's instance id (the "client.N" the cluster knows it by;
	// a reopened session gets a new one).
	uint64_t instance_id() const { return rados_get_instance_id(cluster_); }

private:
	rbd_session() = default;

	rados_t cluster_ = nullptr;
	rados_ioctx_t ioctx_ = nullptr;
	rbd_image_t image_ = nullptr;
	std::string image_name_;
	std::string who_;
	bool cache_enabled_ = false;
	const char *cache_source_ = "the conf";
};

// The image's exclusive-lock holder as librbd names it (rbd_lock_get_owners:
// what rbd_lock_break takes and `rbd lock ls` shows as the address), empty
// when nobody holds it; 0, or librbd's -errno.
int image_lock_holder(rbd_image_t image, std::string &holder);

// librbd's effective rbd_cache of an open image (rbd_config_image_list:
// the conf with pool and image overrides applied); nullopt if unreadable.
std::optional<bool> image_cache_setting(rbd_image_t image);

} // namespace tcmud
