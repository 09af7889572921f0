// SPDX-License-Identifier: GPL-2.0-or-later
#include "ram_backstore.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <thread>

namespace tcmud::scsi::test {

ram_backstore::ram_backstore(uint64_t bytes, mode m)
	: bytes_(bytes), deallocated_(bytes / 512), mode_(m)
{
}

int ram_backstore::allocation(uint64_t offset, uint64_t length, allocation_run *out)
{
	std::lock_guard guard(mutex_);
	uint64_t unit = offset / 512, end = std::min<uint64_t>((offset + length) / 512, deallocated_.size());
	if (unit >= end)
		return -EINVAL;
	bool hole = deallocated_[unit];
	uint64_t n = unit;
	while (n < end && deallocated_[n] == hole)
		n++;
	*out = {!hole, (n - unit) * 512};
	return 0;
}

void ram_backstore::inject(block_op op, int64_t result)
{
	std::lock_guard guard(mutex_);
	injected_.emplace_back(op, result);
}

void ram_backstore::submit(block_io &io)
{
	if (mode_ == mode::deferred) {
		std::lock_guard guard(mutex_);
		queue_.push_back(&io);
		return;
	}
	if (yield_)
		std::this_thread::yield();
	if (piecewise_ && io.op == block_op::write && io.length > 512) {
		perform_piecewise(io);
		return;
	}
	int64_t result = perform(io);
	io.done->io_done(result);
}

// Moves up to `limit` bytes between the store and the request's iovecs.
static void move_data(std::vector<uint8_t> &store, block_io &io, uint64_t limit)
{
	uint64_t at = io.offset;
	for (const iovec &v : io.iov) {
		uint64_t n = std::min<uint64_t>(v.iov_len, limit);
		auto *p = static_cast<uint8_t *>(v.iov_base);
		if (io.op == block_op::read)
			std::memcpy(p, store.data() + at, n);
		else
			std::memcpy(store.data() + at, p, n);
		at += n;
		limit -= n;
	}
}

int64_t ram_backstore::perform(block_io &io)
{
	std::lock_guard guard(mutex_);
	history_.push_back({io.op, io.offset, io.length, io.fua, &io, io.atomic});
	if (io.offset > bytes_.size() || io.length > bytes_.size() - io.offset)
		return -EINVAL;
	int64_t result = static_cast<int64_t>(io.length);
	auto hit = std::find_if(injected_.begin(), injected_.end(),
				[&](const auto &p) { return p.first == io.op; });
	if (hit != injected_.end()) {
		result = hit->second;
		injected_.erase(hit);
		if (result < 0)
			return result;
	}
	if (io.op == block_op::compare_and_write)
		return compare_and_write(io);
	auto moved = static_cast<uint64_t>(result);
	if (io.op == block_op::read)
		reads_done_++;
	// A test may grow bytes() after construction: the map follows.
	if (deallocated_.size() < bytes_.size() / 512)
		deallocated_.resize(bytes_.size() / 512);
	if (io.op == block_op::write || io.op == block_op::write_zeroes ||
	    io.op == block_op::discard)
		for (uint64_t u = io.offset / 512; u < (io.offset + moved) / 512; u++)
			deallocated_[u] = io.op == block_op::discard;
	switch (io.op) {
	case block_op::read:
	case block_op::write:
		move_data(bytes_, io, moved);
		break;
	case block_op::discard:
	case block_op::write_zeroes:
		std::fill_n(bytes_.begin() + static_cast<std::ptrdiff_t>(io.offset), moved, 0);
		break;
	case block_op::flush:
	case block_op::prefetch:
	case block_op::compare_and_write:  // done above
		break;
	}
	return result;
}

// Under the store's mutex, so atomic against every other request.
int64_t ram_backstore::compare_and_write(block_io &io)
{
	std::vector<uint8_t> flat(2 * io.length);
	uint64_t at = 0;
	for (const iovec &v : io.iov) {
		uint64_t n = std::min<uint64_t>(v.iov_len, flat.size() - at);
		std::memcpy(flat.data() + at, v.iov_base, n);
		at += n;
	}
	if (at < flat.size())
		return -EINVAL;
	for (uint64_t i = 0; i < io.length; i++) {
		if (bytes_[io.offset + i] != flat[i]) {
			io.miscompare_offset = i;
			return -EILSEQ;
		}
	}
	std::memcpy(bytes_.data() + io.offset, flat.data() + io.length, io.length);
	for (uint64_t u = io.offset / 512; u < (io.offset + io.length) / 512; u++)
		deallocated_[u] = false;
	return 0;
}

void ram_backstore::perform_piecewise(block_io &io)
{
	{
		std::lock_guard guard(mutex_);
		history_.push_back({io.op, io.offset, io.length, io.fua, &io, io.atomic});
	}
	for (uint64_t done = 0; done < io.length; done += 512) {
		uint64_t reads = reads_done_.load();
		{
			std::lock_guard guard(mutex_);
			copy_part(io, done, 512);
		}
		// After the first unit, give a read of another thread up to 1 ms
		// to land mid-write, so an unprotected read does tear.
		auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
		while (done == 0 && reads_done_.load() == reads &&
		       std::chrono::steady_clock::now() < deadline)
			std::this_thread::yield();
	}
	io.done->io_done(static_cast<int64_t>(io.length));
}

// Copies bytes [from, from + n) of write `io` into the store.
void ram_backstore::copy_part(const block_io &io, uint64_t from, uint64_t n)
{
	uint64_t pos = 0;
	for (const iovec &v : io.iov) {
		uint64_t lo = std::max(pos, from), hi = std::min(pos + v.iov_len, from + n);
		if (lo < hi)
			std::memcpy(bytes_.data() + io.offset + lo,
				    static_cast<const uint8_t *>(v.iov_base) + (lo - pos), hi - lo);
		pos += v.iov_len;
	}
}

void ram_backstore::complete_part(std::size_t i, uint64_t bytes)
{
	std::lock_guard guard(mutex_);
	const block_io &io = *queue_.at(i);
	copy_part(io, 0, std::min(bytes, io.length));
}

std::size_t ram_backstore::queued() const
{
	std::lock_guard guard(mutex_);
	return queue_.size();
}

const block_io &ram_backstore::queued_at(std::size_t i) const
{
	std::lock_guard guard(mutex_);
	return *queue_.at(i);
}

void ram_backstore::complete(std::size_t i)
{
	block_io *io;
	{
		std::lock_guard guard(mutex_);
		io = queue_.at(i);
		queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
	}
	int64_t result = perform(*io);
	io->done->io_done(result);
}

void ram_backstore::complete_all()
{
	while (queued() > 0)
		complete(0);
}

std::vector<ram_backstore::record> ram_backstore::history() const
{
	std::lock_guard guard(mutex_);
	return history_;
}

std::size_t ram_backstore::count(block_op op) const
{
	std::lock_guard guard(mutex_);
	return static_cast<std::size_t>(std::count_if(
		history_.begin(), history_.end(), [&](const record &r) { return r.op == op; }));
}

} // namespace tcmud::scsi::test
