// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Multi-step command emulations written top to bottom: an emulation is a C++20
// coroutine taking `command &` first, and waits with co_await for a
// backstore request or a range-lock grant:
//
//	command_task compare_and_write(command &cmd)
//	{
//		...checks...
//		co_await lock_exclusive(cmd, lba, blocks);
//		int64_t result = co_await submitted(cmd);  // cmd.io() as set up
//		...
//	}
//
// The frame lives in the command slot (command::task_frame()), never on the
// heap: promise_type's operator new hands out that storage, and a frame
// that does not fit fails the command with HARDWARE ERROR rather than
// allocate (tests/unit/scsi/no_allocation_test.cpp checks both that every
// emulation fits and that no command allocates).
//
// A task is resumed only from command::drive(), as a step; a completion that
// arrives inside submit() is picked up by drive()'s loop after the coroutine
// has suspended, so the stack does not grow per request. The frame is
// destroyed when the coroutine returns, before command_done().
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>

#include "command.h"

namespace tcmud::scsi {

class [[nodiscard]] command_task {
public:
	struct promise_type {
		// The coroutine's own parameters follow `size`; the first must
		// be the command whose slot holds the frame.
		template <typename... Rest>
		static void *operator new(std::size_t size, command &cmd, Rest &...) noexcept
		{
			std::span<std::byte> frame = cmd.task_frame();
			return size <= frame.size() ? frame.data() : nullptr;
		}
		// The storage belongs to the command slot.
		static void operator delete(void *, std::size_t) noexcept {}

		static command_task get_return_object_on_allocation_failure() { return {}; }
		command_task get_return_object()
		{
			return command_task(std::coroutine_handle<promise_type>::from_promise(*this));
		}
		std::suspend_always initial_suspend() noexcept { return {}; }
		std::suspend_always final_suspend() noexcept { return {}; }
		void return_void() noexcept {}
		// No exceptions on the data path (an emulation throws none).
		void unhandled_exception() noexcept { std::terminate(); }
	};

	command_task() = default;
	command_task(command_task &&other) noexcept : handle_(other.handle_) { other.handle_ = {}; }
	command_task &operator=(command_task &&) = delete;
	~command_task()
	{
		if (handle_)
			handle_.destroy();
	}

	// Hands the coroutine to the command and runs it to its first wait.
	// Called from a step (a handle_*() function).
	friend void run_task(command &cmd, command_task task);

private:
	explicit command_task(std::coroutine_handle<promise_type> h) : handle_(h) {}
	std::coroutine_handle<promise_type> handle_;
};

void run_task(command &cmd, command_task task);

// The step that resumes a command's task with `result` (what co_await
// returns); destroys the frame once the coroutine has returned.
void resume_task(command &cmd, int64_t result);

// co_await submitted(cmd): submits cmd.io() on the command's queue (or on
// `queue`: EXTENDED COPY to another device) and returns the request's
// result (a read or write: its whole length, or -errno).
struct io_awaiter {
	command &cmd;
	backstore_queue *queue;
	bool await_ready() const noexcept { return false; }
	void await_suspend(std::coroutine_handle<>) const { cmd.submit_to(*queue, resume_task); }
	int64_t await_resume() const noexcept { return cmd.task_result(); }
};

inline io_awaiter submitted(command &cmd) { return {cmd, &cmd.queue()}; }
inline io_awaiter submitted(command &cmd, backstore_queue &queue) { return {cmd, &queue}; }

// co_await lock_shared(cmd, lba, blocks) / lock_exclusive(...): the LBA
// range in the logical unit's range lock (range_lock.h), released with
// release_lock(cmd). Goes on at once when granted at once.
struct lock_awaiter {
	command &cmd;
	range_lock *ranges;
	uint64_t lba;
	uint64_t blocks;
	bool exclusive;
	bool tracked;  // sets work().locked, for release_lock()
	bool await_ready() const noexcept { return false; }
	bool await_suspend(std::coroutine_handle<>) const;
	void await_resume() const noexcept {}
};

lock_awaiter lock_shared(command &cmd, uint64_t lba, uint64_t blocks);
lock_awaiter lock_exclusive(command &cmd, uint64_t lba, uint64_t blocks);
// Any logical unit's range lock (EXTENDED COPY); the caller unlocks it
// (ranges.unlock(cmd.range())).
lock_awaiter lock_shared(command &cmd, range_lock &ranges, uint64_t lba, uint64_t blocks);

} // namespace tcmud::scsi
