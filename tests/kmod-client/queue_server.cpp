// SPDX-License-Identifier: GPL-2.0-or-later
#include "queue_server.h"

#include "tcmu_abi.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>

namespace kmod_client {
namespace {

constexpr size_t hdr_size = sizeof(tcmu_cmd_entry_hdr);
constexpr size_t max_segments = 1024;

struct ring_iov {
	uint64_t base;  // offset from the queue's mailbox
	uint64_t len;
};

uint32_t entry_len_op(const uint8_t *e)
{
	uint32_t v;
	std::memcpy(&v, e, sizeof(v));
	return v;
}

}  // namespace

queue_server::queue_server(uint32_t index, queue_layout layout, int uio_fd,
			   ram_disk &disk, const std::atomic<bool> &stop,
			   const std::atomic<int> &held)
	: index_(index), layout_(layout), uio_fd_(uio_fd),
	  disk_(disk), stop_(stop), held_(held),
	  mb_(reinterpret_cast<tcmu_mailbox *>(layout.mailbox)),
	  trace_(std::getenv("TCMU_MQ_CLIENT_TRACE") != nullptr)
{
	batch_.reserve(256);
}

// The kernel is trusted no more than it has to be: a ring that does not fit
// the queue's ring area would make every later offset check meaningless.
bool queue_server::check_mailbox()
{
	uint64_t off = mb_->cmdr_off, size = mb_->cmdr_size;
	if (off < sizeof(tcmu_mailbox) || size < 64 || size % 8 ||
	    off + size > layout_.ring_size) {
		std::fprintf(stderr, "queue %u: mailbox cmdr_off %llu cmdr_size %llu do not fit ring_size %llu\n",
			     index_, (unsigned long long)off, (unsigned long long)size,
			     (unsigned long long)layout_.ring_size);
		return false;
	}
	ring_ = layout_.mailbox + off;
	cmdr_size_ = static_cast<uint32_t>(size);
	head_seen_ = tail_ = __atomic_load_n(&mb_->cmd_tail, __ATOMIC_ACQUIRE);
	if (tail_ >= cmdr_size_ || tail_ % 8) {
		std::fprintf(stderr, "queue %u: cmd_tail %u out of ring\n", index_, tail_);
		return false;
	}
	return true;
}

uint32_t queue_server::kernel_head() const
{
	return __atomic_load_n(&mb_->cmd_head, __ATOMIC_ACQUIRE);
}

void queue_server::run()
{
	while (!broken_ && drain() && !stop_.load(std::memory_order_relaxed)) {
		if (!wait_for_event())
			break;
	}
	uint32_t head = __atomic_load_n(&mb_->cmd_head, __ATOMIC_ACQUIRE);
	if (head < cmdr_size_)
		stats_.unserved = (head + cmdr_size_ - head_seen_) % cmdr_size_;
}

// Returns false when the device went away (uio unregistered).
bool queue_server::wait_for_event()
{
	pollfd fd = {uio_fd_, POLLIN, 0};
	int n = poll(&fd, 1, 100);
	if (n <= 0)
		return true;
	if (fd.revents & (POLLERR | POLLHUP | POLLNVAL))
		return false;
	if (fd.revents & POLLIN) {
		uint32_t events;
		if (read(uio_fd_, &events, sizeof(events)) < 0)
			return false;
		stats_.wakeups++;
		woke_ = true;
	}
	return true;
}

// Consumes and completes until the kernel's cmd_head stops moving.
bool queue_server::drain()
{
	bool held = is_held();
	if (!held)
		complete_batch();
	for (bool first = true;; first = false) {
		// Acquire pairs with the kernel's barrier before it publishes
		// cmd_head: the entries up to head are complete when we read them.
		uint32_t head = __atomic_load_n(&mb_->cmd_head, __ATOMIC_ACQUIRE);
		if (first && woke_ && head == head_seen_)
			stats_.empty_wakeups++;
		woke_ = false;
		if (head == head_seen_)
			return true;
		if (head >= cmdr_size_ || head % 8) {
			std::fprintf(stderr, "queue %u: cmd_head %u out of ring\n", index_, head);
			stats_.bad_entries++;
			broken_ = true;
			return false;
		}
		bool ok = consume(head);
		if (held)
			stats_.held = batch_.size();
		else
			complete_batch();
		if (!ok) {
			broken_ = true;
			return false;
		}
	}
}

bool queue_server::consume(uint32_t head)
{
	while (head_seen_ != head) {
		uint8_t *e = entry(head_seen_);
		uint32_t len_op = entry_len_op(e);
		uint32_t len = tcmu_hdr_get_len(len_op);
		// An entry never wraps: the kernel pads to the end of the ring.
		if (len < hdr_size || len % 8 || len > cmdr_size_ - head_seen_) {
			std::fprintf(stderr, "queue %u: entry at %u has length %u\n", index_, head_seen_, len);
			stats_.bad_entries++;
			return false;
		}
		switch (tcmu_hdr_get_op(len_op)) {
		case TCMU_OP_PAD:
			break;
		case TCMU_OP_TMR:
			if (len < sizeof(tcmu_tmr_entry)) {
				std::fprintf(stderr, "queue %u: TMR entry at %u has length %u\n", index_, head_seen_, len);
				stats_.bad_entries++;
				return false;
			}
			stats_.tmr++;
			stats_.tmr_ids += reinterpret_cast<const tcmu_tmr_entry *>(e)->cmd_cnt;
			break;
		case TCMU_OP_CMD:
			if (!take_command(head_seen_, len))
				return false;
			break;
		default:
			std::fprintf(stderr, "queue %u: entry at %u has op %u\n", index_, head_seen_,
				     tcmu_hdr_get_op(len_op));
			stats_.bad_entries++;
			return false;
		}
		head_seen_ = (head_seen_ + len) % cmdr_size_;
	}
	stats_.seen = head_seen_;
	return true;
}

// Copies what we need out of the entry (its slot may be overwritten by an
// earlier completion) and runs the command. The CDB must lie in the command
// ring and every data segment in this queue's data area.
bool queue_server::take_command(uint32_t pos, uint32_t len)
{
	const auto *ent = reinterpret_cast<const tcmu_cmd_req *>(entry(pos));
	uint16_t id = ent->hdr.cmd_id;
	if (outstanding_.test(id))
		stats_.duplicates++;
	outstanding_.set(id);
	stats_.received++;
	uint64_t nr_iov = uint64_t{ent->iov_cnt} + ent->iov_bidi_cnt + ent->iov_dif_cnt;
	uint64_t cdb_off = ent->cdb_off, ring_lo = mb_->cmdr_off, ring_hi = ring_lo + cmdr_size_;
	// A bad CDB or segment breaks only this command: the slot itself was
	// sound, so answer it with CHECK CONDITION and count it.
	auto reject = [&] {
		std::fprintf(stderr, "queue %u: cmd %u at %u len %u rejected: iovs %llu cdb_off %llu ring [%llu, %llu) data [%llu, +%llu)\n",
			     index_, id, pos, len, (unsigned long long)nr_iov, (unsigned long long)ent->cdb_off,
			     (unsigned long long)mb_->cmdr_off, (unsigned long long)mb_->cmdr_off + cmdr_size_,
			     (unsigned long long)layout_.ring_size, (unsigned long long)layout_.data_size);
		stats_.bad_entries++;
		batch_.push_back({id, check_condition(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB)});
		return true;
	};
	if (nr_iov > max_segments || tcmu_iov_offset + nr_iov * sizeof(ring_iov) > len ||
	    cdb_off < ring_lo || cdb_off >= ring_hi)
		return reject();
	const uint8_t *cdb = layout_.mailbox + cdb_off;
	size_t cdb_len = cdb_length(cdb[0]);
	if (cdb_len == 0 || cdb_len > ring_hi - cdb_off)
		return reject();
	data_segment segs[max_segments];
	uint64_t data_lo = layout_.ring_size, data_hi = data_lo + layout_.data_size;
	for (uint32_t i = 0; i < ent->iov_cnt; i++) {
		ring_iov v;
		std::memcpy(&v, entry(pos) + tcmu_iov_offset + i * sizeof(v), sizeof(v));
		if (v.base < data_lo || v.base > data_hi || v.len > data_hi - v.base) {
			std::fprintf(stderr, "queue %u: cmd %u iov %u: base %llu len %llu\n", index_, id, i,
				     (unsigned long long)v.base, (unsigned long long)v.len);
			return reject();
		}
		segs[i] = {layout_.mailbox + v.base, v.len};
	}
	batch_.push_back({id, disk_.execute({cdb, cdb_len}, {segs, ent->iov_cnt})});
	if (trace_)
		std::fprintf(stderr, "queue %u: cmd %u op 0x%02x iovs %u -> status 0x%02x\n", index_,
			     id, cdb[0], ent->iov_cnt, batch_.back().result.status);
	return true;
}

// Out-of-order completion: the kernel finds each command by the cmd_id we
// write into the next CMD slot at cmd_tail, so completing the batch in
// reverse order exercises that path every time a batch has two commands.
void queue_server::complete_batch()
{
	if (batch_.empty())
		return;
	for (auto it = batch_.rbegin(); it != batch_.rend(); ++it) {
		skip_non_commands();
		auto *ent = reinterpret_cast<tcmu_cmd_rsp *>(entry(tail_));
		ent->hdr.cmd_id = it->cmd_id;
		ent->hdr.uflags = 0;
		ent->scsi_status = it->result.status;
		std::memcpy(ent->sense_buffer, it->result.sense, it->result.sense_len);
		tail_ = (tail_ + tcmu_hdr_get_len(ent->hdr.len_op)) % cmdr_size_;
		outstanding_.reset(it->cmd_id);
	}
	skip_non_commands();
	// Release: the responses are visible before the kernel sees cmd_tail.
	__atomic_store_n(&mb_->cmd_tail, tail_, __ATOMIC_RELEASE);
	stats_.tail = tail_;
	stats_.completed += batch_.size();
	stats_.held = 0;
	batch_.clear();
	uint32_t value = 0; // ignored: the uio device written to is the queue
	if (write(uio_fd_, &value, sizeof(value)) != sizeof(value)) {
		stats_.write_errors++;
		std::fprintf(stderr, "queue %u: completion write: %s\n", index_, std::strerror(errno));
	}
	stats_.batches++;
}

// PAD and TMR slots between tail and what we consumed need no response.
// Every slot here was checked by consume().
void queue_server::skip_non_commands()
{
	while (tail_ != head_seen_) {
		uint32_t len_op = entry_len_op(entry(tail_));
		if (tcmu_hdr_get_op(len_op) == TCMU_OP_CMD)
			return;
		tail_ = (tail_ + tcmu_hdr_get_len(len_op)) % cmdr_size_;
	}
}

}  // namespace kmod_client
