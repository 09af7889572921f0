// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/file_backstore.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "file/atomic_write_probe.h"
#include "file/backing_identity.h"
#include "file/backing_lock.h"
#include "file/file_config.h"
#include "file/file_queue.h"
#include "log/log.h"

namespace tcmud {

namespace {
constexpr uint64_t buffered_async_threshold = 32 * 1024;
} // namespace
namespace {

struct backing_file {
	unique_fd fd;
	bool is_block = false;
	uint64_t size = 0;
	uint32_t dio_align = 0; // 0: unknown
	struct stat st {};      // fstat at open: the identity recorded
};

// Each step of open() gives its result or a setup_error naming the path;
// errno is read in the brace initialiser, before the message is built.
setup_result<backing_file> open_backing(const file_config &cfg)
{
	// O_NOCTTY and O_NONBLOCK until open_backing_path has seen what the
	// path is: a terminal must not become the daemon's controlling tty, and
	// no device's open may wait (for a carrier, a medium).
	const int flags =
		O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (cfg.direct ? O_DIRECT : 0);
	auto node = open_backing_path(cfg, flags);
	if (!node)
		return node.error();
	backing_file file;
	file.fd = std::move(node->fd);
	file.st = node->st;
	// O_NONBLOCK would stay on the open file, and io_uring honours it on
	// files without NOWAIT support with -EAGAIN instead of waiting: the
	// served fd must block like any other.
	int fl = fcntl(file.fd.get(), F_GETFL);
	if (fl < 0 || fcntl(file.fd.get(), F_SETFL, fl & ~O_NONBLOCK) < 0)
		return setup_error{errno, cfg.path + ": fcntl"};
	if (S_ISREG(file.st.st_mode)) {
		file.size = static_cast<uint64_t>(file.st.st_size);
	} else {
		file.is_block = true;
		if (ioctl(file.fd.get(), BLKGETSIZE64, &file.size) < 0)
			return setup_error{errno, cfg.path + ": BLKGETSIZE64"};
	}
	return file;
}

// O_DIRECT needs every offset and length aligned to what the file system or
// device asks; the SCSI layer only ever sends whole blocks, so the block
// size must be a multiple of it.
setup_result<void> check_direct_alignment(const backstore_config &cfg,
					  const file_config &fcfg, backing_file *file)
{
	if (file->is_block) {
		int lbs = 0;
		if (ioctl(file->fd.get(), BLKSSZGET, &lbs) == 0 && lbs > 0)
			file->dio_align = static_cast<uint32_t>(lbs);
	} else {
		struct statx stx{};
		if (statx(file->fd.get(), "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
		    (stx.stx_mask & STATX_DIOALIGN)) {
			file->dio_align = stx.stx_dio_offset_align;
			// Memory alignment too: buffers come page aligned
			// (io_buffer_alignment), never more.
			if (stx.stx_dio_mem_align > io_buffer_alignment)
				return setup_error{EINVAL, fcfg.path +
								   " needs O_DIRECT buffers aligned to " +
								   std::to_string(stx.stx_dio_mem_align) +
								   " bytes, more than the " +
								   std::to_string(io_buffer_alignment) +
								   " tcmud provides"};
		}
	}
	if (file->dio_align && cfg.block_size % file->dio_align != 0)
		return setup_error{EINVAL, fcfg.path + " needs O_DIRECT alignment of " +
						   std::to_string(file->dio_align) + " bytes; block size " +
						   std::to_string(cfg.block_size) + " is not a multiple"};
	return {};
}

// WRITE ATOMIC across a crash needs RWF_ATOMIC, which only O_DIRECT writes
// of one buffer get (6.12), in the units statx reports. Logged either way,
// so the admin sees which atomicity holds (docs/admin.md).
void probe_atomic(int fd, const file_config &fcfg, const backstore_config &cfg,
		  backstore_caps *caps)
{
	// A failed statx is logged as "not reported": the range lock still holds.
	auto probed = probe_atomic_write(fd);
	const atomic_write_units u = probed ? *probed : atomic_write_units{};
	bool usable = u.reported && fcfg.direct && u.segments_max >= 1 &&
		      u.unit_max >= cfg.block_size && u.unit_min <= u.unit_max;
	if (usable) {
		caps->atomic_write_unit_min = std::max(u.unit_min, cfg.block_size);
		caps->atomic_write_unit_max = u.unit_max;
	}
	log_info(cfg.log_prefix, "statx atomic write: %s unit_min %u unit_max %u segments_max %u: "
		 "WRITE ATOMIC is %s", u.reported ? "reported," : "not reported,", u.unit_min,
		 u.unit_max, u.segments_max,
		 usable ? "RWF_ATOMIC (also across a crash) in those units"
			: "atomic against other commands only (range lock)");
}

struct backing_size {
	bool is_block = false;
	uint64_t bytes = 0;
};

// The size of what fd refers to now: st_size, or the block device's size.
setup_result<backing_size> current_size(int fd, const std::string &path)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return setup_error{errno, path + ": fstat"};
	backing_size s;
	s.is_block = S_ISBLK(st.st_mode);
	if (!s.is_block)
		s.bytes = static_cast<uint64_t>(st.st_size);
	else if (ioctl(fd, BLKGETSIZE64, &s.bytes) < 0)
		return setup_error{errno, path + ": BLKGETSIZE64"};
	return s;
}

// Makes the backing store hold at least `wanted` bytes: a shorter file is
// refused, or grown when the cfgstring says extend=1; a block device cannot
// grow. A longer one is left as it is: only `wanted` bytes are served, and
// that is logged. Used at open and by resize().
setup_result<void> ensure_size(int fd, const std::string &path, bool extend,
			       uint64_t wanted, const std::string &log_prefix)
{
	auto size = current_size(fd, path);
	if (!size)
		return size.error();
	const bool is_block = size->is_block;
	const uint64_t have = size->bytes;
	if (have < wanted) {
		if (!extend || is_block)
			return setup_error{EINVAL, path + " is " + std::to_string(have) +
							   " bytes, smaller than the device size " +
							   std::to_string(wanted),
					   is_block ? "" : "add ;extend=1 to grow it"};
		if (ftruncate(fd, static_cast<off_t>(wanted)) < 0)
			return setup_error{errno, path + ": cannot extend"};
		log_info(log_prefix, "extended %s from %" PRIu64 " to %" PRIu64 " bytes",
			 path.c_str(), have, wanted);
	} else if (have > wanted) {
		log_warn(log_prefix,
			 "%s is %" PRIu64 " bytes; only the first %" PRIu64
			 " (the device size) are served",
			 path.c_str(), have, wanted);
	}
	return {};
}

// Probes each fallocate mode where it cannot hurt data: past the end of a
// regular file (KEEP_SIZE leaves the size alone). ZERO_RANGE goes first
// so the punch frees whatever it may have preallocated.
backstore_caps probe_caps(const backing_file &file)
{
	backstore_caps caps;
	if (file.is_block) {
		// Zeroing a range of a block device always works (the kernel
		// writes zeroes if the device has no faster way); whether a
		// punch really deallocates is the device's business, so discard
		// is not claimed.
		caps.write_zeroes = true;
		return caps;
	}
	const off_t probe_at = static_cast<off_t>((file.size + (1u << 20)) & ~uint64_t((1u << 20) - 1));
	const int fd = file.fd.get();
	caps.write_zeroes =
		fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, probe_at, 4096) == 0;
	caps.discard =
		fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, probe_at, 4096) == 0;
	caps.discard_zeroes = caps.discard; // a hole in a file reads as zeroes
	return caps;
}

} // namespace

file_backstore::file_backstore(unique_fd fd, uint64_t size, backstore_caps caps,
			       bool direct, std::string path, bool extend,
			       std::string log_prefix)
	: fd_(std::move(fd)), size_(size), caps_(caps), direct_(direct),
	  path_(std::move(path)), extend_(extend), log_prefix_(std::move(log_prefix))
{
}

setup_result<std::unique_ptr<file_backstore>> file_backstore::open(const backstore_config &cfg)
{
	auto parsed = parse_file_config(cfg.cfgstring);
	if (!parsed)
		return parsed.error();
	const file_config &fcfg = *parsed;
	if (cfg.dev_size == 0 || cfg.block_size == 0)
		return setup_error{EINVAL, "device size or block size is 0"};
	auto opened = open_backing(fcfg);
	if (!opened)
		return opened.error();
	backing_file &file = *opened;
	// Before anything is written to it (extend=1, the probes below), and
	// before the device's ring is reset (a takeover).
	if (auto locked = lock_backing(file.fd.get(), fcfg.path, cfg.holder_wait_ms,
				       cfg.log_prefix);
	    !locked)
		return locked.error();
	if (auto same = reconcile_backing_identity(cfg, fcfg.path, file.st); !same)
		return same.error();
	if (fcfg.direct)
		if (auto aligned = check_direct_alignment(cfg, fcfg, &file); !aligned)
			return aligned.error();
	if (auto sized = ensure_size(file.fd.get(), fcfg.path, fcfg.extend, cfg.dev_size,
				     cfg.log_prefix);
	    !sized)
		return sized.error();
	// probe_caps() punches past the end: it must see the size just grown.
	if (file.size < cfg.dev_size)
		file.size = cfg.dev_size;
	backstore_caps caps = probe_caps(file);
	// PRE-FETCH reads ahead into the page cache; O_DIRECT reads skip it.
	caps.prefetch = !fcfg.direct;
	caps.pins_buffers = fcfg.direct;
	probe_atomic(file.fd.get(), fcfg, cfg, &caps);
	log_info(cfg.log_prefix, "serving %s: %" PRIu64 " bytes%s, discard %s, write zeroes %s",
		 fcfg.path.c_str(), cfg.dev_size, fcfg.direct ? ", O_DIRECT" : "",
		 caps.discard ? "yes" : "no", caps.write_zeroes ? "yes" : "no");
	return std::unique_ptr<file_backstore>(new file_backstore(
		std::move(file.fd), cfg.dev_size, caps, fcfg.direct, fcfg.path, fcfg.extend,
		cfg.log_prefix));
}

setup_result<std::unique_ptr<backstore_queue>> file_backstore::open_queue(io_engine &engine)
{
	auto q = std::make_unique<file_queue>(engine, fd_.get(), size_, caps_, log_prefix_);
	// A large buffered transfer is mostly a page-cache copy. Done inline, a
	// queue's one thread would make every copy itself; handed to io_uring's
	// async workers, copies run on all CPUs while the queue thread goes on
	// taking commands. Small transfers stay inline, where a hand-off costs
	// more than it saves; O_DIRECT has no copy to spread.
	if (!direct_)
		q->set_async_threshold(buffered_async_threshold);
	return q;
}

setup_result<void> file_backstore::resize(uint64_t new_size)
{
	if (new_size == 0)
		return setup_error{EINVAL, "a device size of 0 bytes"};
	if (auto sized = ensure_size(fd_.get(), path_, extend_, new_size, log_prefix_); !sized)
		return sized;
	// The file is long enough before any queue may use the new bound.
	size_.store(new_size, std::memory_order_release);
	return {};
}

} // namespace tcmud
