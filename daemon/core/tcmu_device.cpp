// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/tcmu_device.h"

#include <linux/target_core_user_mq.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "core/device_copy_target.h"
#include "device/alua_configfs.h"
#include "handler_registry.h"
#include "ring/command_size_limit.h"
#include "ring/mailbox.h"
#include "device/alua_configfs.h"
#include "device/uio_holders.h"
#include "log/log.h"
#include "ring/tcmu_abi.h"

// ring/tcmu_abi.h spells the multi-queue mailbox as numbers; the kmod header
// is the truth.
static_assert(TCMUD_MB_FLAG_CAP_MQ == TCMU_MAILBOX_FLAG_CAP_MQ);
static_assert(TCMUD_MB_FLAG_CAP_DATA_FIXED == TCMU_MAILBOX_FLAG_CAP_DATA_FIXED);
static_assert(TCMUD_MQ_MAILBOX_OFF == TCMU_MQ_MAILBOX_OFF);
static_assert(TCMUD_MQ_NR_QUEUES_OFF == TCMU_MQ_MAILBOX_OFF + offsetof(tcmu_mq_mailbox, nr_queues));
static_assert(TCMUD_MQ_QUEUE_OFF == TCMU_MQ_MAILBOX_OFF + offsetof(tcmu_mq_mailbox, queue));
static_assert(TCMUD_MQ_MAX_QUEUES == TCMU_MQ_MAX_QUEUES);

namespace tcmud {

tcmu_device::tcmu_device(const device_roots &roots, uio_device_info info)
	: roots_(roots), info_(std::move(info)),
	  prefix_(info_.name.subtype + "/" + info_.name.device + ":"),
	  configfs_(roots_, info_.name.hba, info_.name.device)
{
}

tcmu_device::~tcmu_device()
{
	stop();
}

setup_result<std::unique_ptr<tcmu_device>> tcmu_device::open(const device_roots &roots,
							      const uio_device_info &info,
							      const device_options &opts,
							      ring_origin origin)
{
	std::unique_ptr<tcmu_device> dev(new tcmu_device(roots, info));
	setup_result<void> done = dev->open_backstore(origin);
	if (done)
		done = dev->start_queues(opts, origin);
	if (!done) {
		log_error(dev->prefix_, "%s", done.error().what().c_str());
		return done.error();
	}
	return dev;
}

namespace {

// A saved configuration may name one of tcmu-runner's handlers that tcmud
// does not have: say which, and what the administrator can do.
setup_error unsupported_handler(const std::string &subtype)
{
	std::string built_in;
	for (const handler_ops *h : builtin_handlers())
		built_in += (built_in.empty() ? "" : ", ") + std::string(h->subtype);
	setup_error e{ENOENT, "no handler for subtype '" + subtype + "' (tcmud's: " + built_in +
				      ")"};
	if (subtype == "qcow" || subtype == "zbc" || subtype == "fbo" || subtype == "glfs")
		e.hint = "'" + subtype + "' is a tcmu-runner handler that tcmud does not serve; "
			 "keep tcmu-runner for this backstore, or move its data to a file "
			 "(qemu-img convert -O raw for qcow) and re-create it as user:file";
	else
		e.hint = "check the backstore's subtype (targetcli ls /backstores)";
	return e;
}

} // namespace

setup_result<void> tcmu_device::open_backstore(ring_origin origin)
{
	const handler_ops *handler = find_handler(info_.name.subtype);
	if (!handler)
		return unsupported_handler(info_.name.subtype);
	backstore_config bc;
	bc.subtype = info_.name.subtype;
	bc.cfgstring = info_.name.cfgstring;
	bc.log_prefix = prefix_;
	// A device that was there before us is one a previous daemon served:
	// the handler checks that its backing store is still the one recorded
	// when the device was created (docs/admin.md, "Backing paths").
	bc.taking_over = origin == ring_origin::take_over;
	bc.holder_wait_ms = previous_holder_wait_ms;
	bc.identity_record = (roots_.state / "backing" /
			      ("user_" + std::to_string(info_.name.hba) + "-" + info_.name.device))
				     .string();
	auto size = configfs_.dev_size();
	if (!size)
		return size.error();
	auto block = configfs_.hw_block_size();
	if (!block)
		return block.error();
	bc.dev_size = *size;
	bc.block_size = *block;
	if (bc.block_size == 0)
		bc.block_size = 512;
	if (bc.dev_size == 0 || bc.dev_size % bc.block_size)
		return setup_error{EINVAL, "device size " + std::to_string(bc.dev_size) +
						   " is not a non-zero multiple of the " +
						   std::to_string(bc.block_size) + "-byte block"};
	// The handler's error names what it could not open (the file, the
	// image): the cfgstring again in front would say the path twice.
	auto store = handler->open(bc);
	if (!store)
		return store.error();
	store_ = std::move(*store);
	return make_logical_unit(bc);
}

setup_result<void> tcmu_device::make_logical_unit(const backstore_config &bc)
{
	scsi::logical_unit_config lc;
	lc.block_size = bc.block_size;
	lc.num_blocks = bc.dev_size / bc.block_size;
	lc.caps = store_->caps();
	lc.vendor = "LIO-ORG";
	lc.product = "TCMU device";
	if (auto wce = configfs_.emulate_write_cache())
		lc.write_cache_enabled = *wce;
	// MAXIMUM TRANSFER LENGTH is set from the data area once the queues'
	// layout is known (apply_transfer_limit); hw_max_sectors does not bound
	// a user backstore's commands.
	lc.copy_targets = &scsi::copy_target_registry::global();
	lc.copy_self = {info_.name.hba, info_.name.device};
	// Read when an initiator asks, so a serial changed in configfs shows.
	lc.unit_serial = [cfg = configfs_] {
		auto s = cfg.unit_serial();
		return s ? std::move(*s) : std::string();
	};
	// ALUA: configfs's groups, read when an initiator asks (ceph-iscsi adds
	// them after the device exists), with the lock owner's group on top;
	// the backstore learns which group is ours and whether to take the
	// lock over when writes come here (implicit failover).
	lc.port_groups = [cfg = configfs_, roots = roots_, store = store_, prefix = prefix_,
			  warned = std::make_shared<std::atomic<bool>>(false)] {
		auto read = read_target_port_groups(cfg.dir(), roots);
		if (!read) {
			log_warn(prefix, "ALUA groups unreadable, reported as none: %s",
				 read.error().what().c_str());
			return scsi::target_port_groups{};
		}
		const bool ours = !read->groups.empty() && read->have_local_port;
		if (ours && read->explicit_configured && !warned->exchange(true))
			log_warn(prefix, "ALUA group %u allows explicit transitions (SET TARGET PORT "
				 "GROUPS), which tcmud does not implement: reported as implicit. A "
				 "group the kernel holds in standby then never serves I/O; use implicit "
				 "failover (ceph-iscsi: alua_failover_type = implicit, its default)",
				 read->local_group);
		store->set_local_port_group(ours ? std::optional<uint16_t>(read->local_group)
						 : std::nullopt,
					    ours && (read->tpgs & scsi::TPGS_IMPLICIT));
		return scsi::with_lock_owner(std::move(*read), store->owner_port_group());
	};
	auto lu = scsi::logical_unit::create(std::move(lc));
	if (!lu)
		return setup_error{lu.error().error, "unusable geometry: " + lu.error().message};
	lu_ = std::move(*lu);
	// A daemon restarted under a logged-in initiator: the backstore knows
	// its group before the next REPORT TARGET PORT GROUPS.
	(void)lu_->port_groups();
	return {};
}

// A device we did not see created may hold commands a previous daemon took
// from the ring but never answered, and OOOC responses it wrote but never
// published — entries we cannot trust or replay. The kernel's own protocol
// for this: block new commands, reset the ring (every command still in it
// completes with BUSY, which the initiator retries: nothing is lost), then
// attach to the empty ring and unblock once the workers run.
setup_result<void> tcmu_device::take_over()
{
	if (auto idle = wait_for_previous_daemon(); !idle)
		return idle;
	setup_result<void> done = configfs_.block_dev();
	if (done)
		done = configfs_.reset_ring(ring_reset_level::busy);
	if (!done)
		log_warn(prefix_, "taking over without a ring reset (%s): commands a previous "
			 "daemon left in flight may time out", done.error().what().c_str());
	else
		log_info(prefix_, "taken over: ring reset, unanswered commands retried by the initiator");
	return {};
}

// Another process with the device's uio open (a previous daemon hung or
// still exiting, a tcmu-runner, a second tcmud) may still have I/O on its
// data area; reset now, that I/O would land in data blocks of new
// commands. So wait for it, a while; a holder that stays keeps the device
// unserved: no data is risked, and the log says which process to look at.
// (io_uring I/O of a daemon already gone is not visible here: see
// device/uio_holders.h.)
setup_result<void> tcmu_device::wait_for_previous_daemon()
{
	struct stat st;
	const std::string node = (roots_.dev / info_.uio).string();
	if (stat(node.c_str(), &st) < 0 || !S_ISCHR(st.st_mode))
		return {}; // the uio open that follows reports it
	constexpr int limit_ms = previous_holder_wait_ms, step_ms = 100;
	std::vector<pid_t> holders;
	for (int waited = 0;; waited += step_ms) {
		holders = processes_holding(st.st_rdev);
		if (holders.empty()) {
			if (waited > 0)
				log_info(prefix_, "the process holding %s is gone after %d ms",
					 node.c_str(), waited);
			return {};
		}
		if (waited == 0)
			log_warn(prefix_, "%s is still open in process %d (a previous daemon exiting "
				 "with I/O in flight?): waiting up to %d s before taking it over",
				 node.c_str(), int(holders.front()), limit_ms / 1000);
		if (waited >= limit_ms)
			break;
		usleep(step_ms * 1000);
	}
	return setup_error{EBUSY, node + " is still open in process " +
					  std::to_string(holders.front()) +
					  " after " + std::to_string(limit_ms / 1000) +
					  " s: not taken over, so that I/O that process may still have in "
					  "flight cannot land in new commands' data",
			   "once it has exited (a stuck backing store keeps it in the kernel), "
			   "restart tcmud"};
}

setup_result<void> tcmu_device::start_queues(const device_options &opts, ring_origin origin)
{
	const bool takeover = origin == ring_origin::take_over;
	if (takeover)
		if (auto taken = take_over(); !taken)
			return taken;
	// Unblocked whatever happens next: a device left blocked would hang
	// its initiator, and a failed start is reported to the kernel anyway.
	struct unblock {
		const tcmu_configfs &cfg;
		bool armed;
		~unblock() { if (armed) (void)cfg.unblock_dev(); }
	} unblock_on_exit{configfs_, takeover};
	uio_open_options uo;
	uo.nonblocking = true; // the worker reads the event count after a poll
	auto mapped = uio_device::open(roots_, info_, uo);
	if (!mapped)
		return mapped.error();
	uio_ = std::move(*mapped);
	auto detected = detect_queues();
	if (!detected)
		return detected.error();
	const uint32_t count = *detected;
	for (uint32_t q = 1; q < count; ++q)
		if (auto opened = open_queue_uio(q, count); !opened)
			return opened;
	if (auto limited = apply_transfer_limit(opts); !limited)
		return limited;
	for (uint32_t q = 0; q < count; ++q)
		if (auto started = start_queue(opts, q, count); !started)
			return started;
	log_placement(opts.placement);
	register_copy_target();
	log_info(prefix_, "serving /dev/%s: %llu blocks of %u bytes, %zu queue(s)", info_.uio.c_str(),
		 (unsigned long long)lu_->num_blocks(), lu_->block_size(), queues_.size());
	return {};
}

// kmod/'s multi-queue ABI (docs/kmod.md): with nr_queues N > 1, queue 0's
// mailbox has TCMU_MAILBOX_FLAG_CAP_MQ and says N; queues 1..N-1 are uio
// devices of their own. Without the flag (a stock kernel, or N = 1): one
// classic ring.
setup_result<uint32_t> tcmu_device::detect_queues()
{
	auto mq = read_mq_mailbox(uio_.mapping());
	if (!mq)
		return 1u;
	if (mq->nr_queues < 2 || mq->nr_queues > TCMU_MQ_MAX_QUEUES || mq->queue != 0)
		return setup_error{EPROTO, "/dev/" + info_.uio + ": mailbox says queue " +
						   std::to_string(mq->queue) + " of " +
						   std::to_string(mq->nr_queues) +
						   ": not a multi-queue device we can serve"};
	return mq->nr_queues;
}

// MAXIMUM TRANSFER LENGTH: what one command may carry in a queue's data area
// (every queue has the same; queue 0's mapping is that queue), under
// tcmud.conf's cap, in whole blocks.
setup_result<void> tcmu_device::apply_transfer_limit(const device_options &opts)
{
	auto mailbox = read_mailbox(uio_.mapping());
	if (!mailbox) {
		setup_error e = mailbox.error();
		e.message = "/dev/" + info_.uio + ": " + e.message;
		return e;
	}
	const ring_geometry &geo = *mailbox;
	// The zero-copy window's pages cannot be pinned: an O_DIRECT backstore
	// would fail every large READ with EFAULT. Refused here, before the
	// device serves anything; stock kernels never set the flag.
	if (geo.window_size && store_->caps().pins_buffers)
		return setup_error{EINVAL, "/dev/" + info_.uio + ": attrib/zero_copy=1 maps "
				   "large READs into a window O_DIRECT cannot use: set "
				   "zero_copy=0 or serve the file without direct=1"};
	queue_data_area area;
	area.data_bytes = geo.data_size;
	area.cmdr_bytes = geo.cmdr_size;
	uint32_t pages_per_block = 1;
	// Unreadable: the kernel's default, one page per block.
	if (auto v = configfs_.read_attrib_u64("data_pages_per_blk"); v && *v > 0 && *v < 65536)
		pages_per_block = uint32_t(*v);
	area.block_bytes = pages_per_block * uint32_t(sysconf(_SC_PAGESIZE));
	uint64_t by_ring = max_command_data_bytes(area);
	uint64_t bytes = std::min(by_ring, opts.max_transfer_bytes);
	uint32_t bs = lu_->block_size();
	uint64_t blocks = std::min<uint64_t>(bytes / bs, UINT32_MAX);
	if (blocks == 0)
		return setup_error{EINVAL, "a " + std::to_string(area.data_bytes) +
						   "-byte data area cannot hold one " +
						   std::to_string(bs) + "-byte block"};
	lu_->set_max_transfer_blocks(uint32_t(blocks));
	log_info(prefix_, "maximum transfer %llu KiB (data area %llu KiB per queue, cap %llu KiB)",
		 (unsigned long long)(blocks * bs >> 10), (unsigned long long)(area.data_bytes >> 10),
		 (unsigned long long)(opts.max_transfer_bytes >> 10));
	return {};
}

// Queue q's uio device, checked to be what its name says: its mailbox must
// name the same queue of the same number of queues.
setup_result<void> tcmu_device::open_queue_uio(uint32_t q, uint32_t count)
{
	const std::string qs = "queue " + std::to_string(q);
	auto found = find_queue_uio_device(roots_, info_, q);
	if (!found) {
		setup_error e = found.error();
		e.message = qs + " of " + std::to_string(count) + ": " + e.message;
		return e;
	}
	const uio_device_info &qi = *found;
	uio_open_options uo;
	uo.nonblocking = true;
	auto opened = uio_device::open(roots_, qi, uo);
	if (!opened) {
		setup_error e = opened.error();
		e.message = qs + ": " + e.message;
		return e;
	}
	uio_device &dev = *opened;
	auto mq = read_mq_mailbox(dev.mapping());
	if (!mq || mq->nr_queues != count || mq->queue != q)
		return setup_error{EPROTO, qs + ": /dev/" + qi.uio + "'s mailbox says queue " +
						   std::to_string(mq ? mq->queue : 0u) + " of " +
						   std::to_string(mq ? mq->nr_queues : 1u)};
	queue_uios_.push_back(std::move(dev));
	return {};
}

setup_result<void> tcmu_device::start_queue(const device_options &opts, uint32_t q, uint32_t count)
{
	const uio_device &dev = q == 0 ? uio_ : queue_uios_[q - 1];
	queue_params qp;
	qp.map = dev.mapping();
	qp.uio = dev.channel();
	qp.queue_index = q;
	qp.log_prefix = prefix_;
	qp.lu = lu_.get();
	qp.store = store_.get();
	qp.ring.max_in_flight = opts.max_in_flight;
	qp.uring_entries = opts.uring_entries;
	qp.fixed_buffers = opts.fixed_buffers;
	// Resets the workers ask for (a broken ring; commands queued while
	// I/O of commands the kernel had failed could still write their data
	// blocks): the take-over's protocol, on the thread of the last worker
	// to have nothing in flight. On the multi-queue kernel reset_ring
	// resets every queue's ring, so one barrier serves all the queues.
	// Rare, so setup_result's message is affordable here; the worker only
	// wants 0 or -errno.
	if (!resets_)
		resets_ = std::make_shared<reset_barrier>([cfg = configfs_, pfx = prefix_] {
			setup_result<void> done = cfg.block_dev();
			if (done) {
				done = cfg.reset_ring(ring_reset_level::busy);
				setup_result<void> unblocked = cfg.unblock_dev();
				if (done)
					done = unblocked;
			}
			if (done)
				return 0;
			log_error(pfx, "ring reset: %s", done.error().what().c_str());
			return done.error().negative_errno();
		});
	qp.resets = resets_;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	qp.cpu = queue_cpu(opts.placement, q, count, online > 0 ? unsigned(online) : 1);
	auto worker = std::make_unique<queue_worker>(qp);
	if (auto started = worker->start(); !started)
		return started.error();
	queues_.push_back(std::move(worker));
	return {};
}

// Once per device: "placement auto: queue 0 on CPU 0, queue 1 on CPU 1".
void tcmu_device::log_placement(const queue_placement &p) const
{
	std::string where;
	for (const auto &w : queues_) {
		int cpu = w->cpu();
		where += where.empty() ? ": " : ", ";
		where += "queue " + std::to_string(w->queue_index()) +
			 (cpu >= 0 ? " on CPU " + std::to_string(cpu) : " not pinned");
	}
	log_info(prefix_, "placement %s%s", to_string(p).c_str(), where.c_str());
}

// EXTENDED COPY sent to another device of this daemon may name this one by
// the NAA designator its VPD 0x83 shows, derived from the serial as of now
// (a serial changed later in configfs is not followed).
void tcmu_device::register_copy_target()
{
	auto serial = configfs_.unit_serial();
	auto naa = serial ? scsi::naa_from_serial(*serial) : std::nullopt;
	if (!naa) {
		log_info(prefix_, "no NAA designator (unit serial without hex digits): "
			 "not reachable by EXTENDED COPY from other devices");
		return;
	}
	copy_target_ = std::make_shared<device_copy_target>(store_, lu_, prefix_);
	scsi::copy_target_registry::global().add(*naa, {info_.name.hba, info_.name.device},
						 copy_target_);
}

void tcmu_device::stop()
{
	if (copy_target_) {
		scsi::copy_target_registry::global().remove(copy_target_.get());
		copy_target_.reset();
	}
	// Every queue drains at once: a removal with stuck I/O then takes one
	// drain timeout, not one per queue.
	for (auto &q : queues_)
		q->request_stop();
	bool abandoned = false;
	for (auto &q : queues_) {
		q->stop();
		abandoned |= q->abandoned();
	}
	queues_.clear();
	// Backing I/O still in flight reads and writes the data area: the
	// mapping stays for good, as the worker's buffers do.
	if (abandoned) {
		uio_.abandon_mapping();
		for (auto &dev : queue_uios_)
			dev.abandon_mapping();
		log_error(prefix_, "the ring mapping is kept (leaked on purpose): backing I/O "
			  "into its data area is still in flight");
	}
}

// Growing: the backstore first, so no command is admitted past the old end
// before the file holds it. Shrinking: the SCSI capacity first, so nothing
// new is admitted beyond the new end before the backstore refuses it. The
// initiator sees the new capacity after a rescan (READ CAPACITY).
setup_result<void> tcmu_device::resize(uint64_t new_bytes)
{
	const uint32_t bs = lu_->block_size();
	const uint64_t old_bytes = size_bytes();
	const std::string refused = "resize to " + std::to_string(new_bytes) + " bytes refused: ";
	if (new_bytes == 0 || new_bytes % bs != 0)
		return setup_error{EINVAL, refused + "not a positive multiple of the " +
						   std::to_string(bs) + "-byte block size"};
	if (new_bytes < old_bytes)
		lu_->set_num_blocks(new_bytes / bs);
	if (auto resized = store_->resize(new_bytes); !resized) {
		lu_->set_num_blocks(old_bytes / bs);
		setup_error e = resized.error();
		e.message = refused + e.message;
		return e;
	}
	lu_->set_num_blocks(new_bytes / bs);
	log_info(prefix_, "resized from %" PRIu64 " to %" PRIu64 " bytes", old_bytes, new_bytes);
	return {};
}

} // namespace tcmud
