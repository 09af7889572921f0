// SPDX-License-Identifier: GPL-2.0-or-later
#include "command_task.h"

#include <utility>

#include "logical_unit.h"

namespace tcmud::scsi {

void run_task(command &cmd, command_task task)
{
	if (!task.handle_) {
		// The frame did not fit the slot (command::TASK_FRAME_SIZE is
		// too small for this emulation): a bug here, not the initiator's.
		cmd.finish_check_condition(
			sense_builder(HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		return;
	}
	cmd.task() = std::exchange(task.handle_, {});
	resume_task(cmd, 0);
}

void resume_task(command &cmd, int64_t result)
{
	cmd.set_task_result(result);
	std::coroutine_handle<> &task = cmd.task();
	task.resume();
	if (task.done()) {
		task.destroy();
		task = {};
	}
}

bool lock_awaiter::await_suspend(std::coroutine_handle<>) const
{
	if (tracked)
		cmd.work().locked = true;
	bool granted = exclusive ? ranges->lock_exclusive(cmd.range(), lba, blocks)
				 : ranges->lock_shared(cmd.range(), lba, blocks);
	if (granted)
		return false;
	// Queued: the grant comes through command_owner::command_wake() and
	// logical_unit::resume(), which runs this step.
	cmd.continue_on_resume(resume_task);
	return true;
}

lock_awaiter lock_shared(command &cmd, uint64_t lba, uint64_t blocks)
{
	return {.cmd = cmd, .ranges = &cmd.lu().ranges(), .lba = lba, .blocks = blocks,
		.exclusive = false, .tracked = true};
}

lock_awaiter lock_exclusive(command &cmd, uint64_t lba, uint64_t blocks)
{
	return {.cmd = cmd, .ranges = &cmd.lu().ranges(), .lba = lba, .blocks = blocks,
		.exclusive = true, .tracked = true};
}

lock_awaiter lock_shared(command &cmd, range_lock &ranges, uint64_t lba, uint64_t blocks)
{
	return {.cmd = cmd, .ranges = &ranges, .lba = lba, .blocks = blocks,
		.exclusive = false, .tracked = false};
}

} // namespace tcmud::scsi
