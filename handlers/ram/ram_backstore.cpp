// SPDX-License-Identifier: GPL-2.0-or-later
#include "ram/ram_backstore.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "log/log.h"

namespace tcmud {
namespace {

class ram_queue final : public backstore_queue {
public:
	explicit ram_queue(ram_backstore &store) : store_(store) {}
	void submit(block_io &io) override { io.done->io_done(store_.perform(io)); }

private:
	ram_backstore &store_;
};

uint64_t machine_memory()
{
	struct sysinfo si;
	if (sysinfo(&si) < 0)
		return 0;
	return uint64_t(si.totalram) * si.mem_unit;
}

} // namespace

setup_result<void> check_ram_config(std::string_view cfgstring)
{
	// The caller logs this without the cfgstring: it is named here.
	const std::string quoted = "'" + std::string(cfgstring) + "': ";
	if (cfgstring.size() > 64)
		return setup_error{EINVAL, quoted + "the ram handler's cfgstring is an optional "
						    "label of at most 64 characters"};
	for (char c : cfgstring)
		if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
		      c == '-'))
			return setup_error{EINVAL, quoted + "the ram handler's cfgstring is an "
							    "optional label of letters, digits, "
							    "'.', '_' and '-' (it has no backing file)"};
	return {};
}

setup_result<std::unique_ptr<backstore>> ram_backstore::open(const backstore_config &cfg)
{
	if (auto checked = check_ram_config(cfg.cfgstring); !checked)
		return checked.error();
	if (cfg.dev_size == 0)
		return setup_error{EINVAL, "a ram device needs a dev_size"};
	uint64_t ram = machine_memory();
	if (ram && cfg.dev_size > ram)
		return setup_error{ENOMEM, "a ram device of " + std::to_string(cfg.dev_size) +
						   " bytes is larger than this machine's memory (" +
						   std::to_string(ram) + " bytes)"};
	// Not reserved: pages exist once written, like a sparse file.
	void *addr = mmap(nullptr, cfg.dev_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (addr == MAP_FAILED)
		return setup_error{errno, "cannot map " + std::to_string(cfg.dev_size) + " bytes"};
	log_info(cfg.log_prefix, "ram device of %llu bytes (contents are lost when it is "
		 "removed or tcmud stops)", static_cast<unsigned long long>(cfg.dev_size));
	return std::unique_ptr<backstore>(new ram_backstore(mapped_region(addr, cfg.dev_size)));
}

backstore_caps ram_backstore::caps() const
{
	backstore_caps c;
	c.discard = true;
	c.discard_zeroes = true;
	c.write_zeroes = true;
	return c;
}

setup_result<std::unique_ptr<backstore_queue>> ram_backstore::open_queue(io_engine &)
{
	return std::make_unique<ram_queue>(*this);
}

void ram_backstore::zero(uint64_t offset, uint64_t length)
{
	std::byte *base = memory_.bytes().data();
	uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
	uint64_t first = (offset + page - 1) / page * page;
	uint64_t last = (offset + length) / page * page;
	if (first >= last) {
		std::memset(base + offset, 0, length);
		return;
	}
	std::memset(base + offset, 0, first - offset);
	// Private anonymous pages read back as zeroes once dropped, and the
	// memory is returned: a discarded range costs nothing.
	if (madvise(base + first, last - first, MADV_DONTNEED) < 0)
		std::memset(base + first, 0, last - first);
	std::memset(base + last, 0, offset + length - last);
}

int64_t ram_backstore::perform(const block_io &io)
{
	std::span<std::byte> mem = memory_.bytes();
	if (io.offset > mem.size() || io.length > mem.size() - io.offset)
		return -EIO;
	std::byte *at = mem.data() + io.offset;
	switch (io.op) {
	case block_op::read:
	case block_op::write: {
		uint64_t moved = 0;
		for (const iovec &v : io.iov) {
			size_t n = std::min<uint64_t>(v.iov_len, io.length - moved);
			if (io.op == block_op::read)
				std::memcpy(v.iov_base, at + moved, n);
			else
				std::memcpy(at + moved, v.iov_base, n);
			moved += n;
		}
		return int64_t(moved);
	}
	case block_op::flush:
		return 0;
	case block_op::discard:
	case block_op::write_zeroes:
		zero(io.offset, io.length);
		return 0;
	case block_op::prefetch:  // memory needs no readahead (caps.prefetch is false)
	case block_op::compare_and_write:  // not offered: the SCSI layer's range lock does it
		break;
	}
	return -EOPNOTSUPP;
}

} // namespace tcmud
