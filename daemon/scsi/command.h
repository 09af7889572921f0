// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// One SCSI command in flight, as a reusable per-slot object: the ring side
// keeps one per command slot, calls reset() with the CDB and data buffer the
// kernel gave, then logical_unit::execute(). The result (status, sense,
// read_len) is ready when command_owner::command_done() is called, exactly
// once per execute().
//
// Nothing here allocates per command: the backstore requests, the iovec
// scratch lists, the bounce buffer (VERIFY, WRITE AND VERIFY, WRITE SAME,
// COMPARE AND WRITE, UNMAP, ORWRITE, WRITE ATOMIC, EXTENDED COPY) and the
// coroutine frame of a multi-step emulation (command_task.h) keep their
// capacity across reuse of the slot. EXTENDED COPY alone allocates, for
// its parsed lists.
#include <sys/uio.h>

#include <array>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tcmud/backstore.h"
#include "tcmud/io_completion.h"
#include "tcmud/scsi_limits.h"

#include "bounce_buffer.h"
#include "range_lock.h"
#include "scsi_constants.h"
#include "sense_builder.h"

namespace tcmud::scsi {

class command;
class logical_unit;

// What a failed request was doing: a failed read and a failed write get
// different sense (UNRECOVERED READ ERROR, WRITE ERROR).
enum class io_kind : uint8_t { read, write };

class command_owner {
public:
	// The command has finished; its result is valid. Called on the thread
	// that called execute()/resume() or on which a backstore completion
	// arrived, i.e. the owner's queue thread. The SCSI layer does not touch
	// the command afterwards, so the owner may reuse it, even from here.
	virtual void command_done(command &cmd) = 0;

	// A command parked on the range lock (see range_lock.h) may go on. This
	// may be called from ANY thread, including another queue's. The owner
	// must make its own queue thread call logical_unit::resume(cmd, queue)
	// (for example: push onto a list and signal the queue's eventfd); it may
	// call resume() directly only when it is already on that thread.
	virtual void command_wake(command &cmd) = 0;

protected:
	~command_owner() = default;
};

class command final : private io_completion {
public:
	// The CDB bytes a command keeps. Not a limit (the ring's max_cdb_length
	// is): more than any supported opcode needs (opcode_table.cpp checks),
	// so the bytes beyond it are never looked at.
	static constexpr std::size_t CDB_BYTES_KEPT = 32;

	// A step of a command's state machine: called with the result of the
	// backstore request it waited for (or 0 after a range-lock grant).
	using step_fn = void (*)(command &cmd, int64_t result);
	// The fused READ/WRITE path's completion (read_write.cpp): finishes the
	// command from the request's result and returns true, or returns false
	// having changed nothing, and the step given with it runs instead.
	using fused_fn = bool (*)(command &cmd, int64_t result);

	// The coroutine frame of a multi-step emulation (command_task.h) lives
	// here: 272 bytes at most with g++ 12 -O2 (unit tests, all emulations),
	// so 1 KiB leaves room for -O0 and sanitizer builds;
	// no_allocation_test.cpp fails if one outgrows it.
	static constexpr std::size_t TASK_FRAME_SIZE = 1024;

	command();
	command(const command &) = delete;
	command &operator=(const command &) = delete;
	~command();

	// --- for the owner (the ring side) ---

	// Starts a new command in this slot. `cdb` is copied (bytes beyond
	// CDB_BYTES_KEPT are dropped: no supported opcode is that long);
	// `data` must stay valid until command_done().
	void reset(std::span<const uint8_t> cdb, std::span<const iovec> data,
		   command_owner *owner);

	uint8_t status() const { return status_; }
	std::span<const uint8_t> sense() const { return {sense_.data(), sense_length_}; }
	// Data-in bytes actually returned (TCMU's read_len).
	uint64_t read_len() const { return read_len_; }
	// Data-out bytes the command consumed. TCMU gives a command one data
	// buffer, data-in or data-out: a good command that returned no data-in
	// took its whole buffer as data-out.
	uint64_t written_bytes() const
	{
		return status_ == SAM_STAT_GOOD && read_len_ == 0 ? data_bytes_ : 0;
	}
	command_owner *owner() const { return owner_; }

	// --- for the SCSI layer's command emulations ---

	std::span<const uint8_t> cdb() const { return {cdb_.data(), cdb_length_}; }
	// The CDB's storage, CDB_BYTES_KEPT bytes: those past cdb().size() are
	// left over from earlier commands (for whole-word checks that mask
	// them off).
	const std::array<uint8_t, CDB_BYTES_KEPT> &cdb_storage() const { return cdb_; }
	std::span<const iovec> data() const { return data_; }
	// The bytes data() holds, summed once at reset().
	uint64_t data_bytes() const { return data_bytes_; }
	logical_unit &lu() const { return *lu_; }
	backstore_queue &queue() const { return *queue_; }

	void finish_good(uint64_t read_len = 0);
	void finish_status(uint8_t status);
	void finish_check_condition(const sense_builder &sense);
	// Maps a backstore -errno to the sense SBC-4 expects (see command.cpp).
	void finish_io_error(int64_t error, io_kind kind, uint64_t lba);

	// The request submitted by submit(); its `done` is this command.
	block_io &io() { return io_; }
	// Submits io() and continues with `next` when it completes (which may
	// be inside submit()). A read or write that comes back short is
	// -EIO by then (backstore.h: the backstore resumes them).
	void submit(step_fn next);
	// The same on another channel (EXTENDED COPY to another device's
	// backstore, opened on this queue's thread: copy_targets.h).
	void submit_to(backstore_queue &queue, step_fn next);
	// Submits io() on the fused path: when it completes, `done` may finish
	// the command at once, without the step driver; if it declines (an
	// error, a short count, an atomic write in the way), `fallback` runs as
	// a step would. A completion inside submit() always takes `fallback`.
	void submit_fused(fused_fn done, step_fn fallback);
	// Continues with `next` now if `ready`, else once resume() is called.
	void continue_when(bool ready, step_fn next);
	// Continues with `next` once resume() is called.
	void continue_on_resume(step_fn next) { next_ = next; }

	range_lock::entry &range() { return range_; }
	std::vector<iovec> &scratch_iov() { return scratch_iov_; }
	// Page aligned: it may go to an O_DIRECT backstore (bounce_buffer.h).
	bounce_buffer &bounce() { return bounce_; }

	// What an emulation written as plain steps (read_write.cpp) keeps between
	// them; a coroutine (command_task.h) keeps its own locals instead.
	struct work_state {
		uint64_t lba = 0;        // first LBA of the command
		uint64_t blocks = 0;     // blocks in the command
		uint64_t cursor = 0;     // READ: the atomic-write gate's ticket
		bool fua = false;
		bool locked = false;     // range() is held (release_lock())
	};
	work_state &work() { return work_; }

	// For command_task.h: the frame storage, the suspended coroutine and
	// the result it resumes with.
	std::span<std::byte> task_frame() { return task_frame_; }
	std::coroutine_handle<> &task() { return task_; }
	int64_t task_result() const { return task_result_; }
	void set_task_result(int64_t result) { task_result_ = result; }

	// --- for logical_unit ---

	void begin(logical_unit &lu, backstore_queue &queue, sense_format format);
	void run(step_fn first);
	void resume(backstore_queue &queue);

private:
	void io_done(int64_t result) override;
	void drive();
	bool short_transfer(int64_t result) const;

	std::array<uint8_t, CDB_BYTES_KEPT> cdb_{};
	std::size_t cdb_length_ = 0;
	std::span<const iovec> data_;
	uint64_t data_bytes_ = 0;
	command_owner *owner_ = nullptr;
	logical_unit *lu_ = nullptr;
	backstore_queue *queue_ = nullptr;

	uint8_t status_ = SAM_STAT_GOOD;
	uint8_t sense_length_ = 0;
	std::array<uint8_t, sense_buffer_size> sense_{};
	uint64_t read_len_ = 0;
	sense_format sense_format_ = sense_format::fixed;

	// The driver: see drive() for why completions are trampolined.
	step_fn next_ = nullptr;
	fused_fn fused_ = nullptr;
	int64_t pending_result_ = 0;
	bool pending_ = false;
	bool driving_ = false;
	bool finished_ = false;

	block_io io_;

	range_lock::entry range_;
	std::vector<iovec> scratch_iov_;
	bounce_buffer bounce_;
	work_state work_;
	alignas(__STDCPP_DEFAULT_NEW_ALIGNMENT__) std::array<std::byte, TASK_FRAME_SIZE> task_frame_;
	std::coroutine_handle<> task_;
	int64_t task_result_ = 0;
};

} // namespace tcmud::scsi
