// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// An in-process model of the kernel's side of a TCMU ring, for unit tests.
//
// It lays out mailbox, command ring and data area in an ordinary buffer the
// way target_core_user.c does (tcmu_configure_device), queues commands as
// queue_cmd_ring does (PAD at the ring end, one iovec per run of contiguous
// data blocks, CDB right after the iovec array, cdb_off and iov_base as
// offsets from the mapping start, one byte of the ring always kept free), and
// collects responses as tcmu_handle_completions does: walk from the last
// cleaned position to cmd_tail, skip PAD and TMR by length, look up CMD
// entries by hdr.cmd_id. Where the kernel would mark the ring broken the model
// sets broken() and stops; it is stricter than the kernel in one way: it also
// calls the ring broken when the daemon changed an entry's len_op.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace tcmud::test {

struct model_options {
	// cmdr_off is sizeof(struct tcmu_mailbox) = 128, as in the kernel; with
	// cmdr_size = k * 4096 - 128 the data area is page aligned, as there.
	uint32_t cmdr_size = 4096 - 128;
	uint32_t data_blocks = 64;
	uint32_t block_size = 4096;
	uint16_t flags = 0x7; // CAP_OOOC | CAP_READ_LEN | CAP_TMR
};

struct model_completion {
	uint16_t cmd_id = 0;
	uint8_t scsi_status = 0;
	uint8_t uflags = 0;
	uint32_t read_len = 0;
	std::vector<uint8_t> sense;   // all 96 bytes of rsp.sense_buffer
	std::vector<uint8_t> data_in; // gathered from the data area, cut to read_len
};

class kernel_ring_model {
public:
	explicit kernel_ring_model(const model_options &opts = {});

	std::span<std::byte> mapping() { return {buf_.get(), size_}; }
	uint32_t cmdr_off() const { return cmdr_off_; }
	uint32_t cmdr_size() const { return opts_.cmdr_size; }
	size_t data_off() const { return data_off_; }

	// queue_cmd_ring: nullopt where the kernel would queue the command on
	// its qfull list (no ring or data space). data_out is copied into the
	// data area (Data-Out); data_in_len bytes are set aside for Data-In; both
	// at once make a bidirectional command (iov_bidi_cnt).
	std::optional<uint16_t> queue_command(std::span<const uint8_t> cdb,
					      std::span<const uint8_t> data_out = {},
					      size_t data_in_len = 0);
	// queue_tmr_ring. False when the ring has no space.
	bool queue_tmr(uint8_t tmr_type, std::span<const uint16_t> cmd_ids);

	// Ring offset of the most recent entry queue_* wrote (not the PAD).
	uint32_t last_entry_pos() const { return last_pos_; }
	uint32_t cmd_head() const;
	// Raw writes for malformed-input tests (offsets from the mapping start).
	void poke_u32(uint64_t off, uint32_t v);
	void poke_u64(uint64_t off, uint64_t v);
	void set_cmd_head(uint32_t head);

	// tcmu_handle_completions: returns how many commands completed.
	size_t handle_completions();
	const std::vector<model_completion> &completions() const { return done_; }
	bool broken() const { return broken_; }
	size_t in_flight() const { return cmds_.size(); }
	size_t free_blocks() const;

	// tcmu_reset_ring: forget every command, head = tail = 0.
	void reset_ring();

private:
	struct model_cmd {
		std::vector<uint32_t> blocks;
		size_t out_len = 0;
		size_t in_len = 0;
	};
	struct entry_record {
		uint32_t len_op;
		bool is_cmd;
	};
	struct free_deleter {
		void operator()(std::byte *p) const;
	};

	uint32_t head_to_end() const;
	bool ring_space(uint32_t size) const;
	uint32_t insert_padding(uint32_t size);
	bool alloc_blocks(size_t bytes, std::vector<uint32_t> &out);
	std::optional<uint16_t> alloc_cmd_id() const;
	uint32_t write_iovs(uint64_t at, std::span<const uint32_t> blocks, size_t bytes);
	void scatter(std::span<const uint32_t> blocks, std::span<const uint8_t> data);
	std::vector<uint8_t> gather(std::span<const uint32_t> blocks, size_t bytes);
	void publish_head(uint32_t head);
	uint32_t load_tail() const;
	bool complete_entry(uint32_t pos);

	model_options opts_;
	uint32_t cmdr_off_ = 128;
	size_t data_off_ = 0;
	size_t size_ = 0;
	std::unique_ptr<std::byte[], free_deleter> buf_;
	std::vector<bool> block_used_;
	std::map<uint16_t, model_cmd> cmds_;
	std::map<uint32_t, entry_record> entries_; // ring pos -> what we wrote
	std::vector<model_completion> done_;
	uint32_t head_ = 0;
	uint32_t last_cleaned_ = 0;
	uint32_t last_pos_ = 0;
	bool broken_ = false;
};

} // namespace tcmud::test
