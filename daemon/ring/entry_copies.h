// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Per-command storage for what the ring engine copies out of an entry: the
// CDB and the translated iovec array. A fixed pool, sized once at attach and
// found by cmd_id through a 64K-entry index (cmd_id is 16 bits), so taking a
// command allocates nothing. The one exception: a copy's iovec vector grows
// when a command brings more vectors than that copy has seen before, and then
// keeps that capacity (reused buffers; bounded by max_iovs_per_command).
#include <sys/uio.h>

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "ring/cdb_length.h"

namespace tcmud {

struct entry_copy {
	uint16_t cmd_id = 0;
	bool malformed = false; // no usable CDB/iovs; only a response is owed
	uint16_t cdb_len = 0;
	std::array<uint8_t, max_cdb_length> cdb{};
	// At least iov_cnt + iov_bidi_cnt + iov_dif_cnt long, and never empty
	// (the parser writes the usual single vector without a size check);
	// only those first entries are this command's (the vector is reused,
	// never shrunk).
	std::vector<iovec> iovs = std::vector<iovec>(1);
	uint32_t iov_cnt = 0;
	uint32_t iov_bidi_cnt = 0;
	uint32_t iov_dif_cnt = 0;
};

class entry_copies {
public:
	// capacity is clamped to [1, 65535]; initial_iovs is reserved per copy.
	entry_copies(size_t capacity, size_t initial_iovs);

	bool full() const { return free_.empty(); }
	size_t in_flight() const { return copies_.size() - free_.size(); }
	size_t capacity() const { return copies_.size(); }

	// Inline, as the three run once or twice per command.
	// nullptr when cmd_id is not in flight.
	entry_copy *find(uint16_t cmd_id)
	{
		uint16_t n = index_[cmd_id];
		return n == no_copy ? nullptr : &copies_[n - 1];
	}
	// Precondition: !full() and find(cmd_id) == nullptr.
	entry_copy &acquire(uint16_t cmd_id)
	{
		assert(!full() && index_[cmd_id] == no_copy);
		uint16_t n = free_.back();
		free_.pop_back();
		index_[cmd_id] = uint16_t(n + 1);

		entry_copy &s = copies_[n];
		s.cmd_id = cmd_id;
		s.malformed = false;
		s.cdb_len = 0;
		// s.iovs keeps its size as well as its capacity: the parser
		// overwrites the first iov_cnt + bidi + dif entries and only
		// those are handed out, so shrinking and zero-filling it again
		// per command buys nothing.
		s.iov_cnt = s.iov_bidi_cnt = s.iov_dif_cnt = 0;
		return s;
	}
	// False when cmd_id was not in flight: one lookup for "is it ours"
	// and the release.
	bool release(uint16_t cmd_id)
	{
		uint16_t n = index_[cmd_id];
		if (n == no_copy)
			return false;
		index_[cmd_id] = no_copy;
		free_.push_back(uint16_t(n - 1));
		return true;
	}
	void release_all();

private:
	static constexpr uint16_t no_copy = 0;
	struct free_index {
		void operator()(uint16_t *p) const { std::free(p); }
	};

	std::vector<entry_copy> copies_;
	std::vector<uint16_t> free_;
	std::unique_ptr<uint16_t[], free_index> index_; // cmd_id -> copy number + 1, or no_copy
};

} // namespace tcmud
