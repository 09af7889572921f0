// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One TCMU device being served: its uio mapping, its backstore, the SCSI
// logical unit over it, and one queue_worker per command ring (one on a
// stock kernel).
#include <memory>
#include <string>
#include <vector>

#include "core/queue_worker.h"
#include "device/device_roots.h"
#include "device/tcmu_configfs.h"
#include "device/uio_device.h"
#include "device/uio_discovery.h"
#include "scsi/logical_unit.h"
#include "tcmud/block_backend.h"

namespace tcmud {

struct device_options {
	size_t max_in_flight = 256;   // command slots per queue
	unsigned uring_entries = 256; // io_uring SQ entries per queue
};

class tcmu_device {
public:
	// Opens the uio device, the backstore its subtype names and starts
	// serving. nullptr with *error (-errno) and a logged reason otherwise.
	// takeover: the device existed before this daemon (a restart or a
	// crash of the previous one): its ring is reset first, see take_over().
	static std::unique_ptr<tcmu_device> open(const device_roots &roots,
						 const uio_device_info &info,
						 const device_options &opts, bool takeover,
						 int *error);
	~tcmu_device();
	tcmu_device(const tcmu_device &) = delete;
	tcmu_device &operator=(const tcmu_device &) = delete;

	const uio_device_info &info() const { return info_; }
	const std::string &log_prefix() const { return prefix_; }
	const std::vector<std::unique_ptr<queue_worker>> &queues() const { return queues_; }

	// Lets every command in flight finish, then stops the workers.
	void stop();
	// RECONFIG_DEVICE with emulate_write_cache.
	void set_write_cache(bool on) { lu_->set_write_cache_enabled(on); }

private:
	tcmu_device(const device_roots &roots, uio_device_info info);
	int open_backstore(const device_options &opts);
	int start_queues(const device_options &opts, bool takeover);
	void take_over();
	int make_logical_unit(const backstore_config &bc);

	device_roots roots_;
	uio_device_info info_;
	std::string prefix_;
	tcmu_configfs configfs_;
	uio_device uio_;
	std::unique_ptr<backstore> store_;
	std::unique_ptr<scsi::logical_unit> lu_;
	std::vector<std::unique_ptr<queue_worker>> queues_;
};

} // namespace tcmud
