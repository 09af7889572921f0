// SPDX-License-Identifier: GPL-2.0-or-later
// ORWRITE(16) (SBC-4 5.8): each block becomes the bitwise OR of what is on
// the medium and the data-out buffer. Done in chunks, each read into the
// bounce buffer, OR'ed with the data-out bytes and written back, all under
// the range lock held exclusively from the first read to the last write: no
// other write of this logical unit (any queue) lands between a read and its
// write, so the OR is atomic against every other writer, as COMPARE AND
// WRITE's compare is.
#include <algorithm>

#include "emulation.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

constexpr uint64_t CHUNK_BYTES = 128 * 1024;

} // namespace

command_task emulate_orwrite(command &cmd)
{
	lba_fields f = decode_lba_fields(cmd.cdb());
	if (!open_transfer(cmd, f, {.max_blocks = cmd.lu().max_transfer_blocks()}))
		co_return;
	uint32_t bs = cmd.lu().block_size();
	bool fua = write_through(cmd, cmd.lu().write_cache_enabled());

	co_await lock_exclusive(cmd, f.lba, f.blocks);
	uint64_t chunk_limit = std::max<uint64_t>(1, CHUNK_BYTES / bs);
	for (uint64_t cursor = 0; cursor < f.blocks;) {
		uint64_t chunk = std::min<uint64_t>(f.blocks - cursor, chunk_limit);
		uint64_t bytes = chunk * bs;
		uint64_t offset = (f.lba + cursor) * bs;
		// The bounce holds the medium's blocks, then the data-out's.
		std::span<uint8_t> both = bounce_space(cmd, 2 * bytes);
		std::span<uint8_t> medium = both.first(bytes);
		std::span<uint8_t> given = both.subspan(bytes);
		buffer_io(cmd, block_op::read, offset, medium);
		int64_t result = co_await submitted(cmd);
		if (finish_if_failed(cmd, result, io_kind::read, f.lba + cursor))
			co_return;
		copy_from_iovs(cmd.data(), cursor * bs, given);
		for (uint64_t i = 0; i < bytes; i++)
			medium[i] |= given[i];
		buffer_io(cmd, block_op::write, offset, medium);
		cmd.io().fua = fua;
		result = co_await submitted(cmd);
		if (finish_if_failed(cmd, result, io_kind::write, f.lba + cursor))
			co_return;
		cursor += chunk;
	}
	release_lock(cmd);
	cmd.finish_good();
}

} // namespace tcmud::scsi
