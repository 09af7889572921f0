// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Owns one memory mapping and unmaps it exactly once; movable, not copyable.
#include <sys/mman.h>

#include <cstddef>
#include <span>
#include <utility>

namespace tcmud {

class mapped_region {
public:
	mapped_region() = default;
	mapped_region(void *addr, size_t len) : addr_(addr), len_(len) {}
	mapped_region(mapped_region &&o) noexcept
		: addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}
	mapped_region &operator=(mapped_region &&o) noexcept
	{
		if (this != &o) {
			unmap();
			addr_ = std::exchange(o.addr_, nullptr);
			len_ = std::exchange(o.len_, 0);
		}
		return *this;
	}
	mapped_region(const mapped_region &) = delete;
	mapped_region &operator=(const mapped_region &) = delete;
	~mapped_region() { unmap(); }

	// Forgets the mapping without unmapping it: for memory that the kernel
	// may still write into (I/O that never ended). Deliberately leaked.
	void abandon()
	{
		addr_ = nullptr;
		len_ = 0;
	}

	std::span<std::byte> bytes() const
	{
		return {static_cast<std::byte *>(addr_), len_};
	}

private:
	void unmap()
	{
		if (addr_)
			::munmap(addr_, len_);
		addr_ = nullptr;
	}

	void *addr_ = nullptr;
	size_t len_ = 0;
};
} // namespace tcmud
