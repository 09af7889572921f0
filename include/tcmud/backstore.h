// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The interface between the SCSI layer and a backstore (handlers/).
//
// The SCSI layer turns a CDB into block_io requests in bytes; a backstore
// executes them asynchronously and calls block_io::done->io_done() exactly
// once with 0 (or the byte count) on success or -errno on failure. A read
// or write succeeds only whole: the backstore resumes its own short
// transfers (the one place they are resumed; the SCSI layer fails a short
// count with -EIO). A backstore never sees CDBs, sense data or rings.
//
// Threading: one backstore_queue per ring queue, used only by that queue's
// thread. backstore itself is shared by all queues of a device and must be
// safe to call from any of them (it is read-mostly: size, capabilities).
// Each virtual below says whether a backstore must implement it and which
// thread calls it:
// - the control thread: the daemon's main thread (netlink, signals, the
//   control socket; docs/daemon.md);
// - a queue thread: the worker of one ring queue, which also runs that
//   queue's io_uring and every io_done() of its requests;
// - the D-Bus thread: the service thread of daemon/dbus (targetcli).
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tcmud/io_completion.h"
#include "tcmud/setup_result.h"

namespace tcmud {

// Only named here: a backstore that submits through the queue's io_uring
// includes tcmud/io_engine.h itself, so the SCSI layer, which hands the
// engine through without using it, does not depend on liburing.
class io_engine;

// Every buffer the SCSI layer hands a backstore starts on this boundary:
// ring data-area blocks are pages, and the SCSI layer's own buffers are page
// aligned (O_DIRECT wants stx_dio_mem_align; a backstore that needs more
// must refuse to open).
inline constexpr std::size_t io_buffer_alignment = 4096;

enum class block_op : uint8_t {
	read,
	write,
	flush,        // make everything written so far durable
	discard,      // deallocate; later reads return zeroes (see backstore_caps)
	write_zeroes, // write zeroes over [offset, offset + length)
	prefetch,     // start reading [offset, offset + length) into a cache
	// Atomically: compare [offset, offset + length) with the first `length`
	// bytes of iov and, only if equal, write the next `length` bytes there
	// (iov holds 2 * length bytes). A mismatch completes with -EILSEQ and
	// sets miscompare_offset. Only where backstore_caps::compare_and_write.
	compare_and_write,
};

// One backstore request. Owned by the caller (a command slot) and kept alive
// until done->io_done() has been called. `progress` and `scratch_iov` are the
// backstore's, to resume a short read or write (file_queue does); their
// capacity is kept across reuse of the slot so the hot path does not
// allocate.
struct block_io {
	block_op op = block_op::read;
	// write, discard, write_zeroes: durable before completion (the SCSI
	// layer sets it whenever the write cache is off, WCE=0, or FUA=1).
	bool fua = false;
	// write: all or nothing, also across a crash (RWF_ATOMIC). Set only
	// when backstore_caps allow it for this offset and length: a power of
	// two within [atomic_write_unit_min, atomic_write_unit_max], offset a
	// multiple of the length, one iovec.
	bool atomic = false;
	uint64_t offset = 0;         // bytes
	uint64_t length = 0;         // bytes (read/write: sum of iov lengths)
	std::span<const iovec> iov;  // read/write buffers, already bounds-checked
	io_completion *done = nullptr;
	// compare_and_write that ended with -EILSEQ: the offset, from `offset`,
	// of the first byte on the medium that differs from the compare data.
	uint64_t miscompare_offset = 0;

	uint64_t progress = 0;
	std::vector<iovec> scratch_iov;
	// The backstore's own per-request state, from submit() until it calls
	// done->io_done(): a backstore builds it here (placement new of a
	// trivially destructible type that fits) rather than in a pool of its
	// own, so a command is one object, not a command plus a request.
	alignas(8) std::byte backstore_state[64];
};

struct backstore_caps {
	bool discard = false;        // discard really deallocates
	bool discard_zeroes = false; // reads after discard return zeroes (LBPRZ)
	bool write_zeroes = false;
	uint32_t optimal_io_bytes = 0; // 0: unknown
	bool prefetch = false;       // block_op::prefetch fills a cache reads use
	// block_op::compare_and_write is atomic against every other writer of
	// the medium, other processes and hosts included (a cluster's own
	// compare-and-write). Without it the SCSI layer compares and writes in
	// two steps under its range lock, which only excludes this daemon.
	// A backstore may still refuse a request it cannot do atomically with
	// -EOPNOTSUPP (before touching the medium); the SCSI layer then falls
	// back to the range-lock path for that command.
	bool compare_and_write = false;
	// block_io::atomic is honoured for these sizes (bytes); 0: never.
	uint32_t atomic_write_unit_min = 0;
	uint32_t atomic_write_unit_max = 0;
	// The backstore pins the pages of its I/O buffers (O_DIRECT): it cannot
	// serve buffers without struct pages behind them, such as kmod's
	// zero-copy window (TCMU_MAILBOX_FLAG_CAP_ZERO_COPY), whose pages
	// get_user_pages() refuses. tcmud refuses such a device with it.
	bool pins_buffers = false;
};

// Provisioning of a byte range, for GET LBA STATUS: whether it starts with
// allocated (mapped) or deallocated storage, and how many bytes from offset
// have that same status (at least 1, at most the length asked).
struct allocation_run {
	bool mapped = true;
	uint64_t length = 0;
};

class backstore_queue {
public:
	// On its queue thread, after the last request's io_done(). A queue may
	// be destroyed from inside the completion of its last request
	// (EXTENDED COPY closes the queue it opened on another device's
	// backstore there): nothing of it is touched after io_done().
	virtual ~backstore_queue() = default;
	// Required; queue thread. Starts `io` and returns; io.done->io_done()
	// follows exactly once, on this queue's thread, possibly before
	// submit() returns.
	virtual void submit(block_io &io) = 0;
	// Optional (default: none); queue thread. The io_engine this queue
	// submits through, so another backstore can open a queue on the same
	// thread (EXTENDED COPY between devices); nullptr if it has none.
	virtual io_engine *engine() { return nullptr; }
	// Optional; queue thread. Synchronous and rare (GET LBA STATUS). The
	// default, for a backstore that cannot tell, reports everything
	// allocated, which is what a fully provisioned device says. 0, or
	// -errno.
	virtual int allocation(uint64_t offset, uint64_t length, allocation_run *out)
	{
		(void)offset;
		*out = {.mapped = true, .length = length};
		return 0;
	}
};

// What an operator sees of a backstore (tcmudctl list, the metrics), as the
// backstore last saw it: reading it never waits on the medium.
struct backstore_status {
	// "serving", or the backstore's own word for a state in which it
	// serves differently: rbd's "owner", "standby", "lost", "fenced".
	std::string state = "serving";
	// Who holds the medium's exclusive lock, as its cluster names them;
	// empty where the medium has no such lock.
	std::string lock_owner;
	bool lock_owner_is_us = false;
	// Times the backstore reconnected after the medium shut it out (rbd:
	// reopened after a blocklist).
	uint64_t reopens = 0;
};

class backstore {
public:
	// When the device and every EXTENDED COPY that holds it are gone, on
	// whichever thread lets go last.
	virtual ~backstore() = default;
	// Required; any thread. The bytes served: backstore_config::dev_size,
	// or the size of the last successful resize().
	virtual uint64_t size_bytes() const = 0;
	// Required; control thread, once, when the device is opened (the SCSI
	// layer keeps the copy).
	virtual backstore_caps caps() const = 0;
	// Optional (default: EOPNOTSUPP); control thread, while queues run.
	// RECONFIG_DEVICE with a new dev_size. Grows the backing store if it
	// must and may, never destroys data when shrinking (the tail is only
	// no longer served). On failure the served size is unchanged; the
	// caller logs why.
	virtual setup_result<void> resize(uint64_t new_size)
	{
		(void)new_size;
		return setup_error{EOPNOTSUPP, "this backstore cannot change its size"};
	}
	// Required; a queue thread: that queue's worker when it starts, or the
	// queue running an EXTENDED COPY that names this device, with the
	// copying queue's engine. A per-queue I/O channel submitting through
	// `engine`, used on that thread only; or why not, as open() says it
	// (the caller logs it with the device's prefix, once).
	virtual setup_result<std::unique_ptr<backstore_queue>> open_queue(io_engine &engine) = 0;
	// Optional (default: serving, no lock); control thread, for the
	// control socket. What the backstore last saw, without I/O.
	virtual backstore_status status() const { return {}; }

	// --- several gateways on one medium (rbd), for ALUA ---
	// Optional (default: none); any thread, without I/O. The ALUA target
	// port group (tg_pt_gp_id) of the gateway that holds the medium's
	// exclusive lock, as recorded with the lock, so that every gateway
	// reports the same group active/optimized. nullopt: nobody holds it,
	// it is not known yet, or the medium has no such lock (then each
	// group's configured state stands).
	virtual std::optional<uint16_t> owner_port_group() const { return std::nullopt; }
	// Optional (default: ignored); any thread, quick (atomics): called
	// whenever the SCSI layer reads the device's target port groups. The
	// group of the port this gateway serves, to record with the lock when
	// it is ours; and whether ALUA is implicit there, in which case a
	// write that reaches this gateway without the lock is the initiator's
	// path choice and takes the lock over (docs/rbd.md, "ALUA").
	virtual void set_local_port_group(std::optional<uint16_t> group, bool implicit_failover)
	{
		(void)group;
		(void)implicit_failover;
	}
};

// What a device's configuration hands to a handler: the cfgstring after
// "<subtype>/", the device size the kernel was told, and the block size.
struct backstore_config {
	std::string subtype;
	std::string cfgstring;
	uint64_t dev_size = 0;
	uint32_t block_size = 512;
	std::string log_prefix;  // "subtype/devname:" for log lines
	// The device existed before this daemon started (a restart or a
	// takeover), so its backing store is already in use: a handler that
	// recorded what it opened at creation compares, and refuses a change.
	bool taking_over = false;
	// How long open() may wait for another holder of the backing store
	// to let go (a killed daemon's I/O still running in the kernel: see
	// the file handler's backing_lock.h) before it refuses with EBUSY.
	unsigned holder_wait_ms = 0;
	// Absolute path of a small state file this device's handler may keep
	// across restarts (the file handler records the backing file's
	// identity there); empty: none, nothing is recorded or compared.
	std::string identity_record;
};

// A handler: one per backstore type, registered by name. Names match exactly.
struct handler_ops {
	std::string_view subtype;
	std::string_view config_desc;  // shown by targetcli (ConfigDesc)
	// Optional (nullptr: every cfgstring passes); D-Bus thread (targetcli's
	// CheckConfig). Success if cfgstring is acceptable, else why not
	// (EINVAL for its syntax, the errno of what was looked at otherwise).
	setup_result<void> (*check_config)(std::string_view cfgstring);
	// Required; control thread, when a device of this subtype appears.
	// The backstore, or why not, naming what could not be opened or used
	// (the file, the image, the cfgstring): the caller adds only the
	// device's prefix when it logs it, once.
	setup_result<std::unique_ptr<backstore>> (*open)(const backstore_config &cfg);
};

} // namespace tcmud
