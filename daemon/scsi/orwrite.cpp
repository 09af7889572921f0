// SPDX-License-Identifier: GPL-2.0-or-later
// ORWRITE(16) (SBC-4 5.8): each block becomes the bitwise OR of what is on
// the medium and the data-out buffer. Done in chunks, each read into the
// bounce buffer, OR'ed with the data-out bytes and written back, all under
// the range lock held exclusively from the first read to the last write: no
// other write of this logical unit (any queue) lands between a read and its
// write, so the OR is atomic against every other writer, as COMPARE AND
// WRITE's compare is.
#include <algorithm>

#include "handlers.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

constexpr uint8_t FUA_BIT = 0x08;
constexpr uint64_t CHUNK_BYTES = 128 * 1024;

void read_chunk(command &cmd);

void finish_or_error(command &cmd, int64_t result, bool writing)
{
	release_lock(cmd);
	cmd.finish_io_error(result, writing, cmd.work().lba + cmd.work().cursor);
}

void chunk_written(command &cmd, int64_t result)
{
	if (result < 0) {
		finish_or_error(cmd, result, true);
		return;
	}
	cmd.work().cursor += cmd.work().chunk;
	read_chunk(cmd);
}

void chunk_read(command &cmd, int64_t result)
{
	command::work_state &w = cmd.work();
	if (result < 0) {
		finish_or_error(cmd, result, false);
		return;
	}
	uint32_t bs = cmd.lu().block_size();
	uint64_t bytes = w.chunk * bs;
	std::span<uint8_t> medium(cmd.bounce().data(), bytes);
	std::span<uint8_t> given(cmd.bounce().data() + bytes, bytes);
	copy_from_iovs(cmd.data(), w.cursor * bs, given);
	for (uint64_t i = 0; i < bytes; i++)
		medium[i] |= given[i];
	block_io &io = cmd.io();
	io.op = block_op::write;
	io.fua = w.fua;
	io.offset = (w.lba + w.cursor) * bs;
	io.length = bytes;
	cmd.scratch_iov().assign(1, iovec{medium.data(), bytes});
	io.iov = cmd.scratch_iov();
	cmd.submit(chunk_written);
}

void read_chunk(command &cmd)
{
	command::work_state &w = cmd.work();
	if (w.cursor == w.blocks) {
		release_lock(cmd);
		cmd.finish_good();
		return;
	}
	uint32_t bs = cmd.lu().block_size();
	w.chunk = std::min<uint64_t>(w.blocks - w.cursor, std::max<uint64_t>(1, CHUNK_BYTES / bs));
	uint64_t bytes = w.chunk * bs;
	if (cmd.bounce().size() < 2 * bytes)
		cmd.bounce().resize(2 * bytes);
	cmd.scratch_iov().assign(1, iovec{cmd.bounce().data(), bytes});
	block_io &io = cmd.io();
	io.op = block_op::read;
	io.fua = false;
	io.offset = (w.lba + w.cursor) * bs;
	io.length = bytes;
	io.iov = cmd.scratch_iov();
	cmd.submit(chunk_read);
}

void locked(command &cmd, int64_t)
{
	read_chunk(cmd);
}

} // namespace

void handle_orwrite(command &cmd, int64_t)
{
	lba_fields f = decode_lba_fields(cmd.cdb());
	if (!check_transfer_length(cmd, f) || !check_lba_range(cmd, f.lba, f.blocks))
		return;
	if (f.blocks == 0) {
		cmd.finish_good();
		return;
	}
	if (!check_data_length(cmd, uint64_t{f.blocks} * cmd.lu().block_size()))
		return;
	command::work_state &w = cmd.work();
	w.lba = f.lba;
	w.blocks = f.blocks;
	w.cursor = 0;
	w.fua = (cmd.cdb()[1] & FUA_BIT) || !cmd.lu().write_cache_enabled();
	take_exclusive_lock(cmd, f.lba, f.blocks, locked);
}

} // namespace tcmud::scsi
