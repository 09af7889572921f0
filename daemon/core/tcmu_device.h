// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One TCMU device being served: its uio mapping, its backstore, the SCSI
// logical unit over it, and one queue_worker per command ring (one on a
// stock kernel).
#include <memory>
#include <string>
#include <vector>

#include "config/queue_placement.h"
#include "core/queue_worker.h"
#include "device/device_roots.h"
#include "device/tcmu_configfs.h"
#include "device/uio_device.h"
#include "device/uio_discovery.h"
#include "scsi/copy_targets.h"
#include "scsi/logical_unit.h"
#include "tcmud/backstore.h"
#include "tcmud/defaults.h"
#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud {

struct device_options {
	size_t max_in_flight = default_max_in_flight;   // command slots per queue
	unsigned uring_entries = default_uring_entries; // io_uring SQ entries per queue
	queue_placement placement;    // which CPU each queue's worker runs on
	// tcmud.conf max_transfer_kb: the cap on MAXIMUM TRANSFER LENGTH; the
	// data area may lower it further (see apply_transfer_limit).
	uint64_t max_transfer_bytes = uint64_t(default_max_transfer_kb) << 10;
	// tcmud.conf fixed_buffers: register a queue's data area as io_uring
	// fixed buffers where the kernel offers it (queue_params).
	bool fixed_buffers = true;
};

// Where a device's ring comes from: created while we ran (fresh), or served
// by a daemon before us, which may have left commands in it (take_over).
enum class ring_origin : uint8_t { fresh, take_over };

// How long opening a device waits for another process (a previous daemon
// exiting, or the kernel still running a killed one's io_uring I/O) to let
// go of its uio node and its backing store; then the device is refused,
// unserved, rather than risk that I/O landing in new commands' data.
// Longer than a backing store's usual worst case (a multipath device
// switching paths, dm-delay in tests/vm), shorter than the initiator's
// patience.
inline constexpr unsigned previous_holder_wait_ms = 30'000;

class tcmu_device {
public:
	// Opens the uio device, the backstore its subtype names and starts
	// serving; or says why not (already logged with the device's prefix,
	// which only the device knows).
	// ring_origin::take_over: the device existed before this daemon (a
	// restart or a crash of the previous one): its ring is reset first,
	// see take_over().
	static setup_result<std::unique_ptr<tcmu_device>> open(const device_roots &roots,
								const uio_device_info &info,
								const device_options &opts,
								ring_origin origin);
	~tcmu_device();
	tcmu_device(const tcmu_device &) = delete;
	tcmu_device &operator=(const tcmu_device &) = delete;

	const uio_device_info &info() const { return info_; }
	const std::string &log_prefix() const { return prefix_; }
	const std::vector<std::unique_ptr<queue_worker>> &queues() const { return queues_; }

	// Lets every command in flight finish, then stops the workers.
	void stop();
	uint64_t size_bytes() const { return lu_->num_blocks() * lu_->block_size(); }
	uint32_t block_size() const { return lu_->block_size(); }
	// What the backstore last saw of its medium (state, lock holder).
	tcmud::backstore_status backstore_status() const { return store_->status(); }
	// "<subtype>/<cfgstring>", as the kernel's dev_config holds it.
	std::string dev_config() const { return info_.name.subtype + "/" + info_.name.cfgstring; }
	// RECONFIG_DEVICE with emulate_write_cache.
	void set_write_cache(bool on) { lu_->set_write_cache_enabled(on); }
	// RECONFIG_DEVICE with dev_size: online resize, while queues run. On
	// an error the old size is still served; the caller logs it and
	// answers the kernel with its errno.
	setup_result<void> resize(uint64_t new_bytes);

private:
	tcmu_device(const device_roots &roots, uio_device_info info);
	setup_result<void> open_backstore(ring_origin origin);
	setup_result<void> start_queues(const device_options &opts, ring_origin origin);
	setup_result<void> take_over();
	setup_result<void> wait_for_previous_daemon();
	setup_result<void> make_logical_unit(const backstore_config &bc);

	setup_result<uint32_t> detect_queues();
	setup_result<void> open_queue_uio(uint32_t q, uint32_t count);
	setup_result<void> apply_transfer_limit(const device_options &opts);
	setup_result<void> start_queue(const device_options &opts, uint32_t q, uint32_t count);
	void log_placement(const queue_placement &p) const;
	void register_copy_target();

	device_roots roots_;
	uio_device_info info_;
	std::string prefix_;
	tcmu_configfs configfs_;
	uio_device uio_; // queue 0: the device's own uio device
	// Shared with device_copy_target: an EXTENDED COPY of another device
	// may still be using them when this device goes.
	std::shared_ptr<backstore> store_;
	std::shared_ptr<scsi::logical_unit> lu_;
	// Registered in scsi::copy_target_registry::global() while serving.
	std::shared_ptr<scsi::copy_target> copy_target_;
	// Queues 1..N-1 of a multi-queue device, each its own uio device.
	// Declared before queues_ so they outlive the workers using them.
	std::vector<uio_device> queue_uios_;
	// The ring resets of all the queues (reset_barrier.h).
	std::shared_ptr<reset_barrier> resets_;
	std::vector<std::unique_ptr<queue_worker>> queues_;
};

} // namespace tcmud
