// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One queue's channel to a file backstore. Requests go straight from the
// caller's iovecs (the ring's data area) to the file through the queue's
// io_uring: READV/WRITEV (READ/WRITE for one buffer), RWF_DSYNC for FUA,
// FSYNC(DATASYNC) for flush, FALLOCATE for discard and write-zeroes (followed
// by FSYNC(DATASYNC) before completion when FUA). Where the engine has the
// queue's data area registered as fixed buffers (io_engine::fixed_buffers),
// a read or write whose iovecs are one contiguous range inside one buffer
// goes as READ_FIXED/WRITE_FIXED instead: the kernel then pins nothing per
// I/O.
//
// A short read or write is resumed from block_io::progress until the
// request is done or fails; a read that meets end of file first is -EIO.
// If the io_uring has no free SQE a request is parked, in order, and restarted
// after the engine's next reap: nothing is dropped. Nothing is allocated
// per request: its state lives in the caller's block_io.
//
// Lifetime: destroy a file_queue only when every submitted request has
// completed; the engine holds pointers into it until then.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <atomic>

#include "tcmud/backstore.h"
#include "tcmud/io_engine.h"

namespace tcmud {

class file_queue final : public backstore_queue {
public:
	// size: the backstore's served size, which a resize may change while
	// this queue runs; it must outlive the queue.
	file_queue(io_engine &engine, int fd, const std::atomic<uint64_t> &size,
		   backstore_caps caps, std::string log_prefix);
	~file_queue() override;
	file_queue(const file_queue &) = delete;
	file_queue &operator=(const file_queue &) = delete;

	void submit(block_io &io) override;
	io_engine *engine() override { return &engine_; }
	int allocation(uint64_t offset, uint64_t length, allocation_run *out) override;

	// Test seam: sees (and may replace) every raw CQE result before the
	// queue acts on it, to inject EIO, ENOSPC or short transfers.
	using result_filter = int64_t (*)(void *ctx, const block_io &io,
					  int64_t result);
	void set_result_filter(result_filter filter, void *ctx);

	// Reads and writes of at least `bytes` go to io_uring's async workers
	// (IOSQE_ASYNC) instead of being tried inline; 0 (the default): never.
	void set_async_threshold(uint64_t bytes) { async_threshold_ = bytes; }

	size_t parked() const { return parked_count_; }
	bool uses_fixed_file() const { return fixed_index_ >= 0; }
	// Whether the engine had fixed buffers when the queue opened, and how
	// many SQEs went as READ_FIXED/WRITE_FIXED since.
	bool uses_fixed_buffers() const { return fixed_area_.size != 0; }
	uint64_t fixed_buffer_sqes() const { return fixed_buffer_sqes_; }

private:
	struct request;
	struct sqe_waiter final : io_completion {
		file_queue *queue = nullptr;
		void io_done(int64_t) override { queue->restart_parked(); }
	};

	request *acquire(block_io &io);
	void start(request *req);
	void prepare(request *req, io_uring_sqe *sqe);
	// Inline into submit() and start(): out of line it cost a call and
	// its prologue per read or write.
	[[gnu::always_inline]] inline void prepare_rw(request *req, io_uring_sqe *sqe);
	[[gnu::always_inline]] inline void use_fixed_buffer(uintptr_t addr, uint64_t len,
							    io_uring_sqe *sqe);
	bool prepare_fixed(std::span<const iovec> iov, uint64_t off, bool is_read,
			   io_uring_sqe *sqe);
	std::span<const iovec> remaining_iov(request *req);
	void park(request *req);
	void restart_parked();
	void on_result(request *req, int64_t result);
	int64_t check_rw_progress(request *req, int64_t result);
	// Inline: every request ends here, from several places in on_result.
	[[gnu::always_inline]] inline void complete(request *req, int64_t result);
	int validate(const block_io &io) const;

	io_engine &engine_;
	int fd_;
	int fixed_index_ = -1;
	// What every SQE on the file names: the fixed file's index and
	// IOSQE_FIXED_FILE, or the plain fd and no flag.
	int sqe_fd_;
	uint8_t sqe_file_flags_ = 0;
	fixed_buffer_area fixed_area_; // size 0: the plain ops only
	uint64_t fixed_buffer_sqes_ = 0;
	const std::atomic<uint64_t> &size_;
	backstore_caps caps_;
	std::string log_prefix_;

	size_t in_flight_ = 0; // submitted, io_done() not yet called
	request *park_head_ = nullptr;
	request *park_tail_ = nullptr;
	size_t parked_count_ = 0;
	bool waiting_for_sqe_ = false;
	bool logged_early_end_ = false;
	sqe_waiter waiter_;

	result_filter filter_ = nullptr;
	void *filter_ctx_ = nullptr;
	uint64_t async_threshold_ = 0;
};

} // namespace tcmud
