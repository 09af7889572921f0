// SPDX-License-Identifier: GPL-2.0-or-later
#include "kernel_ring_model.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "ring/tcmu_abi.h"

namespace tcmud::test {

namespace {

constexpr size_t page = 4096;

uint32_t round_up8(size_t n)
{
	return uint32_t((n + 7) & ~size_t(7));
}

} // namespace

void kernel_ring_model::free_deleter::operator()(std::byte *p) const
{
	::operator delete[](p, std::align_val_t(page));
}

kernel_ring_model::kernel_ring_model(const model_options &opts)
	: opts_(opts), block_used_(opts.data_blocks, false)
{
	data_off_ = size_t(cmdr_off_) + opts_.cmdr_size;
	// Exactly the mapping's size, so AddressSanitizer sees any access past it.
	size_ = data_off_ + size_t(opts_.data_blocks) * opts_.block_size;
	buf_.reset(new (std::align_val_t(page)) std::byte[size_]());

	poke_u32(TCMUD_MB_CMDR_OFF_OFF, cmdr_off_);
	poke_u32(TCMUD_MB_CMDR_SIZE_OFF, opts_.cmdr_size);
	uint16_t version = TCMUD_MAILBOX_VERSION;
	std::memcpy(buf_.get() + TCMUD_MB_VERSION_OFF, &version, 2);
	std::memcpy(buf_.get() + TCMUD_MB_FLAGS_OFF, &opts_.flags, 2);
}

uint32_t kernel_ring_model::cmd_head() const
{
	return head_;
}

// The kernel writes shared memory while the worker thread reads it (a
// reset moves cmd_tail under a running queue): aligned words are stored
// atomically, as the kernel's WRITE_ONCE does, so the race is the modelled
// one and not a data race in the test. Misaligned pokes (malformed-entry
// tests) happen before the worker looks.
template <typename T> static void poke(std::byte *at, T v)
{
	if (reinterpret_cast<uintptr_t>(at) % sizeof(T) == 0)
		std::atomic_ref<T>(*reinterpret_cast<T *>(at)).store(v, std::memory_order_release);
	else
		std::memcpy(at, &v, sizeof(v));
}

void kernel_ring_model::poke_u32(uint64_t off, uint32_t v)
{
	poke(buf_.get() + off, v);
}

void kernel_ring_model::poke_u64(uint64_t off, uint64_t v)
{
	poke(buf_.get() + off, v);
}

void kernel_ring_model::set_cmd_head(uint32_t head)
{
	publish_head(head);
}

void kernel_ring_model::publish_head(uint32_t head)
{
	head_ = head;
	auto *w = reinterpret_cast<uint32_t *>(buf_.get() + TCMUD_MB_CMD_HEAD_OFF);
	std::atomic_ref<uint32_t>(*w).store(head, std::memory_order_release);
}

uint32_t kernel_ring_model::load_tail() const
{
	auto *w = reinterpret_cast<uint32_t *>(buf_.get() + TCMUD_MB_CMD_TAIL_OFF);
	return std::atomic_ref<uint32_t>(*w).load(std::memory_order_acquire);
}

uint32_t kernel_ring_model::head_to_end() const
{
	return opts_.cmdr_size - head_;
}

bool kernel_ring_model::ring_space(uint32_t size) const
{
	uint32_t needed = head_to_end() >= size ? size : size + head_to_end();
	uint32_t used = head_ >= last_cleaned_ ? head_ - last_cleaned_
					       : opts_.cmdr_size - last_cleaned_ + head_;
	// One byte stays unused, or full could not be told from empty.
	return opts_.cmdr_size - used - 1 >= needed;
}

uint32_t kernel_ring_model::insert_padding(uint32_t size)
{
	if (head_to_end() < size) {
		uint32_t pad = head_to_end();
		uint64_t at = cmdr_off_ + uint64_t(head_);
		std::memset(buf_.get() + at, 0, TCMUD_HDR_SIZE);
		poke_u32(at + TCMUD_HDR_LEN_OP_OFF, pad | TCMUD_OP_PAD);
		entries_[head_] = {.len_op = pad | TCMUD_OP_PAD, .is_cmd = false};
		publish_head(0);
	}
	return head_;
}

bool kernel_ring_model::alloc_blocks(size_t bytes, std::vector<uint32_t> &out)
{
	size_t want = (bytes + opts_.block_size - 1) / opts_.block_size;
	// Lowest free block first, as find_first_zero_bit: after out-of-order
	// frees this fragments the data area, giving multi-iovec commands.
	for (uint32_t b = 0; b < block_used_.size() && want > 0; b++) {
		if (!block_used_[b]) {
			block_used_[b] = true;
			out.push_back(b);
			want--;
		}
	}
	if (want == 0)
		return true;
	for (uint32_t b : out)
		block_used_[b] = false;
	out.clear();
	return false;
}

size_t kernel_ring_model::free_blocks() const
{
	return size_t(std::count(block_used_.begin(), block_used_.end(), false));
}

std::optional<uint16_t> kernel_ring_model::alloc_cmd_id() const
{
	// idr_alloc(1, USHRT_MAX): the lowest free id from 1.
	for (uint32_t id = 1; id < 0xffff; id++)
		if (!cmds_.count(uint16_t(id)))
			return uint16_t(id);
	return std::nullopt;
}

// Writes one iovec per run of contiguous blocks; returns how many.
uint32_t kernel_ring_model::write_iovs(uint64_t at, std::span<const uint32_t> blocks,
				       size_t bytes)
{
	uint32_t n = 0;
	uint64_t base = 0, len = 0;
	for (size_t i = 0; i < blocks.size(); i++) {
		uint64_t chunk = std::min<uint64_t>(opts_.block_size, bytes);
		bytes -= chunk;
		if (i > 0 && blocks[i] == blocks[i - 1] + 1) {
			len += chunk;
			continue;
		}
		if (i > 0) {
			poke_u64(at + n * TCMUD_IOVEC_SIZE, base);
			poke_u64(at + n * TCMUD_IOVEC_SIZE + 8, len);
			n++;
		}
		base = data_off_ + uint64_t(blocks[i]) * opts_.block_size;
		len = chunk;
	}
	if (!blocks.empty()) {
		poke_u64(at + n * TCMUD_IOVEC_SIZE, base);
		poke_u64(at + n * TCMUD_IOVEC_SIZE + 8, len);
		n++;
	}
	return n;
}

static uint32_t count_runs(std::span<const uint32_t> blocks)
{
	uint32_t runs = 0;
	for (size_t i = 0; i < blocks.size(); i++)
		if (i == 0 || blocks[i] != blocks[i - 1] + 1)
			runs++;
	return runs;
}

void kernel_ring_model::scatter(std::span<const uint32_t> blocks, std::span<const uint8_t> data)
{
	for (size_t i = 0; i < blocks.size() && !data.empty(); i++) {
		size_t n = std::min<size_t>(opts_.block_size, data.size());
		std::memcpy(buf_.get() + data_off_ + size_t(blocks[i]) * opts_.block_size,
			    data.data(), n);
		data = data.subspan(n);
	}
}

std::vector<uint8_t> kernel_ring_model::gather(std::span<const uint32_t> blocks, size_t bytes)
{
	std::vector<uint8_t> out(bytes);
	size_t done = 0;
	for (size_t i = 0; i < blocks.size() && done < bytes; i++) {
		size_t n = std::min<size_t>(opts_.block_size, bytes - done);
		std::memcpy(out.data() + done,
			    buf_.get() + data_off_ + size_t(blocks[i]) * opts_.block_size, n);
		done += n;
	}
	return out;
}

std::optional<uint16_t> kernel_ring_model::queue_command(std::span<const uint8_t> cdb,
							 std::span<const uint8_t> data_out,
							 size_t data_in_len)
{
	if (broken_)
		return std::nullopt;
	model_cmd cmd;
	cmd.out_len = data_out.size();
	cmd.in_len = data_in_len;
	std::vector<uint32_t> out_blocks, in_blocks;
	if (!alloc_blocks(cmd.out_len, out_blocks))
		return std::nullopt;
	if (!alloc_blocks(cmd.in_len, in_blocks)) {
		for (uint32_t b : out_blocks)
			block_used_[b] = false;
		return std::nullopt;
	}
	uint32_t runs = count_runs(out_blocks) + count_runs(in_blocks);
	uint32_t base_size = std::max<uint32_t>(TCMUD_REQ_IOV_OFF + runs * TCMUD_IOVEC_SIZE,
						TCMUD_CMD_ENTRY_SIZE);
	uint32_t size = base_size + round_up8(cdb.size());
	auto id = alloc_cmd_id();
	if (size > opts_.cmdr_size / 2 || !ring_space(size) || !id) {
		for (uint32_t b : out_blocks)
			block_used_[b] = false;
		for (uint32_t b : in_blocks)
			block_used_[b] = false;
		return std::nullopt;
	}

	uint32_t pos = insert_padding(size);
	uint64_t at = cmdr_off_ + uint64_t(pos);
	std::memset(buf_.get() + at, 0, size);
	poke_u32(at + TCMUD_HDR_LEN_OP_OFF, size | TCMUD_OP_CMD);
	std::memcpy(buf_.get() + at + TCMUD_HDR_CMD_ID_OFF, &*id, 2);
	uint64_t iov_at = at + TCMUD_REQ_IOV_OFF;
	uint32_t n_out = write_iovs(iov_at, out_blocks, cmd.out_len);
	uint32_t n_in = write_iovs(iov_at + n_out * TCMUD_IOVEC_SIZE, in_blocks, cmd.in_len);
	// Data-Out vectors come first; Data-In ones are iov_bidi_cnt only when
	// there is Data-Out too, else they are the command's iov_cnt.
	bool bidi = cmd.out_len && cmd.in_len;
	poke_u32(at + TCMUD_REQ_IOV_CNT_OFF, bidi ? n_out : n_out + n_in);
	poke_u32(at + TCMUD_REQ_IOV_BIDI_CNT_OFF, bidi ? n_in : 0);
	poke_u64(at + TCMUD_REQ_CDB_OFF_OFF, at + base_size);
	std::memcpy(buf_.get() + at + base_size, cdb.data(), cdb.size());
	scatter(out_blocks, data_out);

	cmd.blocks = out_blocks;
	cmd.blocks.insert(cmd.blocks.end(), in_blocks.begin(), in_blocks.end());
	cmds_[*id] = std::move(cmd);
	entries_[pos] = {.len_op = size | TCMUD_OP_CMD, .is_cmd = true};
	last_pos_ = pos;
	publish_head((pos + size) % opts_.cmdr_size);
	return id;
}

bool kernel_ring_model::queue_tmr(uint8_t tmr_type, std::span<const uint16_t> cmd_ids)
{
	uint32_t size = round_up8(TCMUD_TMR_ENTRY_SIZE + cmd_ids.size() * 2);
	if (broken_ || !ring_space(size))
		return false;
	uint32_t pos = insert_padding(size);
	uint64_t at = cmdr_off_ + uint64_t(pos);
	std::memset(buf_.get() + at, 0, size);
	poke_u32(at + TCMUD_HDR_LEN_OP_OFF, size | TCMUD_OP_TMR);
	std::memcpy(buf_.get() + at + TCMUD_TMR_TYPE_OFF, &tmr_type, 1);
	poke_u32(at + TCMUD_TMR_CMD_CNT_OFF, uint32_t(cmd_ids.size()));
	if (!cmd_ids.empty())
		std::memcpy(buf_.get() + at + TCMUD_TMR_CMD_IDS_OFF, cmd_ids.data(),
			    cmd_ids.size() * 2);
	entries_[pos] = {.len_op = size | TCMUD_OP_TMR, .is_cmd = false};
	last_pos_ = pos;
	publish_head((pos + size) % opts_.cmdr_size);
	return true;
}

// tcmu_handle_completion for the CMD entry at pos; false = ring broken.
bool kernel_ring_model::complete_entry(uint32_t pos)
{
	uint64_t at = cmdr_off_ + uint64_t(pos);
	uint16_t id;
	std::memcpy(&id, buf_.get() + at + TCMUD_HDR_CMD_ID_OFF, 2);
	auto it = cmds_.find(id);
	if (it == cmds_.end())
		return false; // "cmd_id %u not found, ring is broken"

	model_completion c;
	c.cmd_id = id;
	std::memcpy(&c.uflags, buf_.get() + at + TCMUD_HDR_UFLAGS_OFF, 1);
	std::memcpy(&c.scsi_status, buf_.get() + at + TCMUD_RSP_SCSI_STATUS_OFF, 1);
	std::memcpy(&c.read_len, buf_.get() + at + TCMUD_RSP_READ_LEN_OFF, 4);
	auto *sense = reinterpret_cast<const uint8_t *>(buf_.get() + at + TCMUD_RSP_SENSE_OFF);
	c.sense.assign(sense, sense + TCMUD_SENSE_BUFFERSIZE);

	model_cmd &cmd = it->second;
	if (cmd.in_len && !(c.uflags & TCMUD_UFLAG_UNKNOWN_OP)) {
		size_t len = cmd.in_len;
		if ((c.uflags & TCMUD_UFLAG_READ_LEN) && c.read_len && c.read_len < len)
			len = c.read_len;
		size_t out_blocks = (cmd.out_len + opts_.block_size - 1) / opts_.block_size;
		c.data_in = gather(std::span(cmd.blocks).subspan(out_blocks), len);
	}
	for (uint32_t b : cmd.blocks)
		block_used_[b] = false;
	cmds_.erase(it);
	done_.push_back(std::move(c));
	return true;
}

size_t kernel_ring_model::handle_completions()
{
	size_t completed = 0;
	uint32_t tail = broken_ ? last_cleaned_ : load_tail();
	if (tail >= opts_.cmdr_size || tail % 8) {
		broken_ = true;
		return 0;
	}
	while (!broken_ && last_cleaned_ != tail) {
		auto rec = entries_.find(last_cleaned_);
		uint32_t len_op;
		std::memcpy(&len_op, buf_.get() + cmdr_off_ + last_cleaned_, 4);
		// The kernel reads the length back from the entry; a daemon that
		// changed it would send the walk astray, so the model stops there.
		if (rec == entries_.end() || rec->second.len_op != len_op) {
			broken_ = true;
			break;
		}
		if (rec->second.is_cmd && !complete_entry(last_cleaned_)) {
			broken_ = true;
			break;
		}
		completed += rec->second.is_cmd;
		uint32_t len = len_op & ~uint32_t(TCMUD_OP_MASK);
		entries_.erase(rec);
		last_cleaned_ = (last_cleaned_ + len) % opts_.cmdr_size;
	}
	return completed;
}

void kernel_ring_model::reset_ring()
{
	cmds_.clear();
	entries_.clear();
	std::fill(block_used_.begin(), block_used_.end(), false);
	last_cleaned_ = 0;
	poke_u32(TCMUD_MB_CMD_TAIL_OFF, 0);
	publish_head(0);
	broken_ = false;
}

} // namespace tcmud::test
