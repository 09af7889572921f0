// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The command's private data buffer (WRITE SAME's block, the medium side of
// COMPARE AND WRITE and VERIFY, UNMAP's copied list). It goes to the
// backstore as an I/O buffer, and a backstore opened with O_DIRECT needs
// buffers aligned to the file's stx_dio_mem_align: plain heap memory is only
// 16-byte aligned, so those commands failed with HARDWARE ERROR depending on
// where malloc put the buffer. Page alignment covers every file system and
// block device (the file handler refuses a file that asks for more).
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "tcmud/backstore.h"

namespace tcmud::scsi {

inline constexpr std::size_t BOUNCE_ALIGNMENT = io_buffer_alignment;

template <typename T>
struct page_aligned_allocator {
	using value_type = T;

	page_aligned_allocator() = default;
	template <typename U>
	page_aligned_allocator(const page_aligned_allocator<U> &) noexcept {}

	T *allocate(std::size_t n)
	{
		return static_cast<T *>(
			::operator new(n * sizeof(T), std::align_val_t{BOUNCE_ALIGNMENT}));
	}
	void deallocate(T *p, std::size_t) noexcept
	{
		::operator delete(p, std::align_val_t{BOUNCE_ALIGNMENT});
	}
	template <typename U>
	bool operator==(const page_aligned_allocator<U> &) const noexcept { return true; }
};

using bounce_buffer = std::vector<uint8_t, page_aligned_allocator<uint8_t>>;

} // namespace tcmud::scsi
