// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/file_backstore.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>

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
};

// The outcome of one step of open(): 0, or -errno with the reason.
struct open_error {
	int error = 0;
	std::string reason;
};

open_error fail(int error, std::string reason)
{
	return {error, std::move(reason)};
}

open_error open_backing(const file_config &cfg, backing_file *out)
{
	int flags = O_RDWR | O_CLOEXEC | (cfg.direct ? O_DIRECT : 0);
	out->fd.reset(::open(cfg.path.c_str(), flags));
	if (!out->fd) {
		int err = errno;
		std::string why = cfg.path + ": " + strerror(err);
		if (err == EINVAL && cfg.direct)
			why += " (the file system may not support O_DIRECT)";
		return fail(-err, why);
	}
	struct stat st;
	if (fstat(out->fd.get(), &st) < 0)
		return fail(-errno, cfg.path + ": fstat: " + strerror(errno));
	if (S_ISREG(st.st_mode)) {
		out->size = static_cast<uint64_t>(st.st_size);
	} else if (S_ISBLK(st.st_mode)) {
		out->is_block = true;
		if (ioctl(out->fd.get(), BLKGETSIZE64, &out->size) < 0)
			return fail(-errno, cfg.path + ": BLKGETSIZE64: " +
						    strerror(errno));
	} else {
		return fail(-EINVAL, cfg.path +
					     " is neither a regular file nor a block device");
	}
	return {};
}

// O_DIRECT needs every offset and length aligned to what the file system or
// device asks; the SCSI layer only ever sends whole blocks, so the block
// size must be a multiple of it.
open_error check_direct_alignment(const backstore_config &cfg,
				  const file_config &fcfg, backing_file *file)
{
	if (file->is_block) {
		int lbs = 0;
		if (ioctl(file->fd.get(), BLKSSZGET, &lbs) == 0 && lbs > 0)
			file->dio_align = static_cast<uint32_t>(lbs);
	} else {
		struct statx stx{};
		if (statx(file->fd.get(), "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
		    (stx.stx_mask & STATX_DIOALIGN))
			file->dio_align = stx.stx_dio_offset_align;
	}
	if (file->dio_align && cfg.block_size % file->dio_align != 0)
		return fail(-EINVAL, fcfg.path + " needs O_DIRECT alignment of " +
					     std::to_string(file->dio_align) +
					     " bytes; block size " +
					     std::to_string(cfg.block_size) + " is not a multiple");
	return {};
}

// Never serve a size different from the kernel's without saying so: a
// shorter file is refused (or grown on request), a longer one is served
// only up to dev_size, and that is logged.
open_error reconcile_size(const backstore_config &cfg, const file_config &fcfg,
			  backing_file *file)
{
	if (file->size < cfg.dev_size) {
		if (!fcfg.extend || file->is_block)
			return fail(-EINVAL,
				    fcfg.path + " is " + std::to_string(file->size) +
					    " bytes, smaller than the device size " +
					    std::to_string(cfg.dev_size) +
					    (file->is_block ? "" : "; add ;extend=1 to grow it"));
		if (ftruncate(file->fd.get(), static_cast<off_t>(cfg.dev_size)) < 0)
			return fail(-errno, fcfg.path + ": cannot extend: " +
						    strerror(errno));
		log_info(cfg.log_prefix, "extended %s from %" PRIu64 " to %" PRIu64 " bytes",
			 fcfg.path.c_str(), file->size, cfg.dev_size);
		file->size = cfg.dev_size;
	} else if (file->size > cfg.dev_size) {
		log_warn(cfg.log_prefix,
			 "%s is %" PRIu64 " bytes; only the first %" PRIu64
			 " (the device size) are served",
			 fcfg.path.c_str(), file->size, cfg.dev_size);
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
			       bool direct, std::string log_prefix)
	: fd_(std::move(fd)), size_(size), caps_(caps), direct_(direct),
	  log_prefix_(std::move(log_prefix))
{
}

std::unique_ptr<backstore> file_backstore::open(const backstore_config &cfg,
						int *error, std::string *reason)
{
	file_config fcfg;
	backing_file file;
	open_error result;
	std::string bad_syntax = parse_file_config(cfg.cfgstring, &fcfg);
	if (!bad_syntax.empty())
		result = fail(-EINVAL, bad_syntax);
	else if (cfg.dev_size == 0 || cfg.block_size == 0)
		result = fail(-EINVAL, "device size or block size is 0");
	if (!result.error)
		result = open_backing(fcfg, &file);
	if (!result.error && fcfg.direct)
		result = check_direct_alignment(cfg, fcfg, &file);
	if (!result.error)
		result = reconcile_size(cfg, fcfg, &file);
	if (result.error) {
		log_error(cfg.log_prefix, "cannot open: %s", result.reason.c_str());
		*error = result.error;
		*reason = std::move(result.reason);
		return nullptr;
	}
	backstore_caps caps = probe_caps(file);
	log_info(cfg.log_prefix, "serving %s: %" PRIu64 " bytes%s, discard %s, write zeroes %s",
		 fcfg.path.c_str(), cfg.dev_size, fcfg.direct ? ", O_DIRECT" : "",
		 caps.discard ? "yes" : "no", caps.write_zeroes ? "yes" : "no");
	return std::unique_ptr<backstore>(new file_backstore(
		std::move(file.fd), cfg.dev_size, caps, fcfg.direct, cfg.log_prefix));
}

std::unique_ptr<backend_queue> file_backstore::open_queue(io_engine &engine)
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

} // namespace tcmud
