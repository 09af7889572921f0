// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The CMD entries that still owe the kernel a response, oldest first.
//
// tcmu_handle_completions walks from its last cleaned position to cmd_tail,
// skips PAD and TMR entries by their length, and for each CMD entry looks up
// hdr.cmd_id and takes rsp. So the response of ANY finished command may go into
// the oldest CMD entry not yet answered (out-of-order completion), and the
// tail may then move to the next unanswered CMD entry. Recording each CMD
// entry's place and len_op when we first read it means the tail walk never
// re-reads an offset or length the kernel could have changed since.
//
// There is one record per command in flight, so the capacity equals the
// entry-copy pool's and push never finds the queue full.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tcmud {

struct pending_response {
	uint32_t pos = 0;    // offset in the command ring
	uint32_t len_op = 0; // as validated when the entry was read
	uint16_t cmd_id = 0; // as read, to see whether the entry is still ours
};

class pending_responses {
public:
	// The records are a power of two, so an index wraps with a mask, not
	// a division per push and per pop (the capacity, max_in_flight, is any
	// number).
	explicit pending_responses(size_t capacity)
		: records_(std::bit_ceil(std::max<size_t>(capacity, 1))), mask_(records_.size() - 1)
	{
	}

	bool empty() const { return count_ == 0; }
	size_t size() const { return count_; }
	const pending_response &front() const { return records_[first_]; }

	// Precondition: size() < capacity.
	void push(pending_response r)
	{
		records_[(first_ + count_) & mask_] = r;
		count_++;
	}

	// Precondition: !empty().
	pending_response pop()
	{
		pending_response r = records_[first_];
		first_ = (first_ + 1) & mask_;
		count_--;
		return r;
	}

	void clear() { first_ = count_ = 0; }

private:
	std::vector<pending_response> records_;
	size_t mask_;
	size_t first_ = 0;
	size_t count_ = 0;
};

} // namespace tcmud
