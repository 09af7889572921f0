// SPDX-License-Identifier: GPL-2.0-or-later
#include "iovec_buffer.h"

#include <algorithm>
#include <cstring>

namespace tcmud::scsi {

namespace {

// Walks the pieces of [offset, offset + length) in order, calling
// fn(piece_base, piece_length, position_in_range) for each; returns the
// number of bytes walked (less than length if the buffer ends first).
template <typename Fn>
uint64_t for_each_piece(std::span<const iovec> iovs, uint64_t offset, uint64_t length, Fn fn)
{
	uint64_t done = 0;
	for (const iovec &v : iovs) {
		if (done == length)
			break;
		if (offset >= v.iov_len) {
			offset -= v.iov_len;
			continue;
		}
		uint64_t n = std::min<uint64_t>(v.iov_len - offset, length - done);
		if (!fn(static_cast<uint8_t *>(v.iov_base) + offset, n, done))
			return done;
		done += n;
		offset = 0;
	}
	return done;
}

} // namespace

uint64_t detail::iov_sum(std::span<const iovec> iovs)
{
	uint64_t total = 0;
	for (const iovec &v : iovs)
		total = (UINT64_MAX - total < v.iov_len) ? UINT64_MAX : total + v.iov_len;
	return total;
}

uint64_t copy_to_iovs(std::span<const iovec> iovs, uint64_t offset,
		      std::span<const uint8_t> src)
{
	return for_each_piece(iovs, offset, src.size(),
			      [&](uint8_t *p, uint64_t n, uint64_t at) {
				      std::memcpy(p, src.data() + at, n);
				      return true;
			      });
}

uint64_t zero_iovs(std::span<const iovec> iovs, uint64_t offset)
{
	uint64_t total = iov_total(iovs);
	if (offset >= total)
		return 0;
	return for_each_piece(iovs, offset, total - offset,
			      [&](uint8_t *p, uint64_t n, uint64_t) {
				      std::memset(p, 0, n);
				      return true;
			      });
}

uint64_t copy_from_iovs(std::span<const iovec> iovs, uint64_t offset, std::span<uint8_t> dst)
{
	return for_each_piece(iovs, offset, dst.size(),
			      [&](uint8_t *p, uint64_t n, uint64_t at) {
				      std::memcpy(dst.data() + at, p, n);
				      return true;
			      });
}

std::optional<uint64_t> first_difference(std::span<const iovec> iovs, uint64_t offset,
					 std::span<const uint8_t> expected)
{
	std::optional<uint64_t> found;
	uint64_t walked = for_each_piece(iovs, offset, expected.size(),
					 [&](uint8_t *p, uint64_t n, uint64_t at) {
		auto [mine, theirs] = std::mismatch(p, p + n, expected.begin() + at);
		if (mine == p + n)
			return true;
		found = at + static_cast<uint64_t>(mine - p);
		return false;
	});
	if (!found && walked < expected.size())
		found = walked;
	return found;
}

bool slice_iovs(std::span<const iovec> iovs, uint64_t offset, uint64_t length,
		std::vector<iovec> &out)
{
	out.clear();
	uint64_t walked = for_each_piece(iovs, offset, length,
					 [&](uint8_t *p, uint64_t n, uint64_t) {
		out.push_back({p, static_cast<size_t>(n)});
		return true;
	});
	return walked == length;
}

} // namespace tcmud::scsi
