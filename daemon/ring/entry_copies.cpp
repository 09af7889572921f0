// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/entry_copies.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <new>

namespace tcmud {

namespace {

constexpr size_t cmd_id_space = 65536;
constexpr size_t max_copies = cmd_id_space - 1; // copy number + 1 must fit 16 bits

} // namespace

entry_copies::entry_copies(size_t capacity, size_t initial_iovs)
	: copies_(std::clamp<size_t>(capacity, 1, max_copies)),
	  index_(static_cast<uint16_t *>(std::calloc(cmd_id_space, sizeof(uint16_t))))
{
	// calloc: 128 KiB comes from fresh zero pages, and only the pages of
	// ids in use are ever touched (filling it with a "no copy" marker
	// faulted in all of it, a fifth of the ring fuzz target's time).
	if (!index_)
		throw std::bad_alloc();
	free_.reserve(copies_.size());
	for (size_t i = copies_.size(); i-- > 0;) {
		copies_[i].iovs.reserve(initial_iovs);
		free_.push_back(uint16_t(i));
	}
}

void entry_copies::release_all()
{
	// Only the ids in flight have an entry, and their copies know them:
	// clearing those beats refilling all 64K (a reset per fuzz run).
	for (size_t i = 0; i < copies_.size(); i++)
		if (index_[copies_[i].cmd_id] == i + 1)
			index_[copies_[i].cmd_id] = no_copy;
	free_.clear();
	for (size_t i = copies_.size(); i-- > 0;)
		free_.push_back(uint16_t(i));
}

} // namespace tcmud
