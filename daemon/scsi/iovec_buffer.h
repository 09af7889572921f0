// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Byte-level access to a command's data buffer, which arrives as an iovec
// list (the ring code has already checked every iovec lies inside the data
// area). Every helper is bounded by the list itself, so a buffer shorter than
// a CDB implies can only produce a short count, never an overrun.
#include <sys/uio.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tcmud::scsi {

namespace detail {
uint64_t iov_sum(std::span<const iovec> iovs);
} // namespace detail

// Sum of the iovec lengths (saturating; a real list never comes close).
// Inline for its usual case, every command's data buffer on the hot path:
// one vector (the kernel gives one per run of contiguous data blocks),
// whose length needs no loop.
inline uint64_t iov_total(std::span<const iovec> iovs)
{
	return iovs.size() == 1 ? iovs[0].iov_len : detail::iov_sum(iovs);
}

// Copies src into the buffer starting at byte `offset`; returns bytes copied.
uint64_t copy_to_iovs(std::span<const iovec> iovs, uint64_t offset,
		      std::span<const uint8_t> src);

// Zeroes the buffer from byte `offset` to its end; returns bytes zeroed.
uint64_t zero_iovs(std::span<const iovec> iovs, uint64_t offset);

// Copies from the buffer starting at byte `offset` into dst; returns bytes
// copied.
uint64_t copy_from_iovs(std::span<const iovec> iovs, uint64_t offset,
			std::span<uint8_t> dst);

// Compares the buffer from byte `offset` with `expected`. Returns the index
// into `expected` of the first differing byte (a byte missing from the
// buffer counts as different), or nullopt if all are equal.
std::optional<uint64_t> first_difference(std::span<const iovec> iovs, uint64_t offset,
					 std::span<const uint8_t> expected);

// Fills `out` with iovecs covering bytes [offset, offset + length) of the
// buffer. `out` keeps its capacity across calls, so a reused command slot
// does not allocate. Returns false if the buffer is shorter than that.
bool slice_iovs(std::span<const iovec> iovs, uint64_t offset, uint64_t length,
		std::vector<iovec> &out);

} // namespace tcmud::scsi
