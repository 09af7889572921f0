// SPDX-License-Identifier: GPL-2.0-or-later
#include "ring/command_slots.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <new>

namespace tcmud {

namespace {

constexpr size_t cmd_id_space = 65536;
constexpr size_t max_slots = cmd_id_space - 1; // slot + 1 must fit 16 bits

} // namespace

command_slots::command_slots(size_t capacity, size_t initial_iovs)
	: slots_(std::clamp<size_t>(capacity, 1, max_slots)),
	  index_(static_cast<uint16_t *>(std::calloc(cmd_id_space, sizeof(uint16_t))))
{
	// calloc: 128 KiB comes from fresh zero pages, and only the pages of
	// ids in use are ever touched (filling it with a "no slot" marker
	// faulted in all of it, a fifth of the ring fuzz target's time).
	if (!index_)
		throw std::bad_alloc();
	free_.reserve(slots_.size());
	for (size_t i = slots_.size(); i-- > 0;) {
		slots_[i].iovs.reserve(initial_iovs);
		free_.push_back(uint16_t(i));
	}
}

command_slot *command_slots::find(uint16_t cmd_id)
{
	uint16_t n = index_[cmd_id];
	return n == no_slot ? nullptr : &slots_[n - 1];
}

command_slot &command_slots::acquire(uint16_t cmd_id)
{
	assert(!full() && index_[cmd_id] == no_slot);
	uint16_t n = free_.back();
	free_.pop_back();
	index_[cmd_id] = uint16_t(n + 1);

	command_slot &s = slots_[n];
	s.cmd_id = cmd_id;
	s.malformed = false;
	s.cdb_len = 0;
	// s.iovs keeps its size as well as its capacity: the parser overwrites
	// the first iov_cnt + bidi + dif entries and only those are handed out,
	// so shrinking and zero-filling it again per command buys nothing.
	s.iov_cnt = s.iov_bidi_cnt = s.iov_dif_cnt = 0;
	return s;
}

void command_slots::release(uint16_t cmd_id)
{
	uint16_t n = index_[cmd_id];
	if (n == no_slot)
		return;
	index_[cmd_id] = no_slot;
	free_.push_back(uint16_t(n - 1));
}

void command_slots::release_all()
{
	// Only the ids in flight have an entry, and their slots know them:
	// clearing those beats refilling all 64K (a reset per fuzz run).
	for (size_t i = 0; i < slots_.size(); i++)
		if (index_[slots_[i].cmd_id] == i + 1)
			index_[slots_[i].cmd_id] = no_slot;
	free_.clear();
	for (size_t i = slots_.size(); i-- > 0;)
		free_.push_back(uint16_t(i));
}

} // namespace tcmud
