// SPDX-License-Identifier: GPL-2.0-or-later
// The SBC-4 commands a non-removable disk answers without moving user data:
// PREVENT ALLOW MEDIUM REMOVAL (SBC-4 5.13), READ DEFECT DATA 10/12
// (5.20/5.21) and PRE-FETCH 10/16 (5.9/5.10).
#include <algorithm>
#include <array>

#include "byte_order.h"
#include "handlers.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

// The page cache's readahead is asked for at most this much per request
// (io_uring's fadvise takes a 32-bit length).
constexpr uint64_t PREFETCH_CHUNK_BYTES = 1ull << 30;

void prefetch_next(command &cmd);

void prefetch_done(command &cmd, int64_t result)
{
	command::work_state &w = cmd.work();
	if (result < 0) {
		cmd.finish_io_error(result, false, w.lba + w.cursor);
		return;
	}
	w.cursor += w.chunk;
	prefetch_next(cmd);
}

void prefetch_next(command &cmd)
{
	command::work_state &w = cmd.work();
	uint32_t bs = cmd.lu().block_size();
	if (w.cursor == w.blocks) {
		// SBC-4 5.9: every block asked for is (being) read into the
		// cache, which has room for all of them.
		cmd.finish_status(SAM_STAT_CONDITION_MET);
		return;
	}
	w.chunk = std::min<uint64_t>(w.blocks - w.cursor, PREFETCH_CHUNK_BYTES / bs);
	block_io &io = cmd.io();
	io.op = block_op::prefetch;
	io.fua = false;
	io.offset = (w.lba + w.cursor) * bs;
	io.length = w.chunk * bs;
	io.iov = {};
	cmd.submit(prefetch_done);
}

} // namespace

// The medium cannot be removed (INQUIRY RMB = 0), so there is nothing to
// prevent; PREVENT 00b and 01b are accepted, 1xb is obsolete in SBC-4.
void handle_prevent_allow_medium_removal(command &cmd, int64_t)
{
	if (cmd.cdb()[4] & 0x02) {
		finish_invalid_cdb(cmd, 4, 1);
		return;
	}
	cmd.finish_good();
}

// READ DEFECT DATA: there are no defects, so both lists are valid and empty,
// in whichever address format was asked (an empty list has no descriptor
// whose format could differ). 111b is reserved.
void handle_read_defect_data(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	bool twelve = cdb[0] == READ_DEFECT_DATA_12;
	uint8_t request = twelve ? cdb[1] : cdb[2];
	if ((request & 0x07) == 0x07) {
		finish_invalid_cdb(cmd, twelve ? 1 : 2, 2);
		return;
	}
	std::array<uint8_t, 8> header{};
	// PLISTV/GLISTV echo REQ_PLIST/REQ_GLIST; DEFECT LIST FORMAT echoes.
	header[1] = request & 0x1f;
	if (twelve)
		finish_data_in(cmd, header, get_be32(cdb, 6));
	else
		finish_data_in(cmd, std::span<const uint8_t>(header).first(4), get_be16(cdb, 7));
}

// PRE-FETCH 10/16. A PREFETCH LENGTH of 0 means "to the last LBA". The
// backstore's cache is the page cache: a file served with O_DIRECT has none
// (reads bypass it), so nothing is read and the status is GOOD, as SBC-4
// asks of a cache that cannot hold the blocks. Otherwise the range is handed
// to the kernel's readahead and the status is CONDITION MET. IMMED changes
// nothing: the readahead is only queued, which is quick either way.
void handle_prefetch(command &cmd, int64_t)
{
	lba_fields f = decode_lba_fields(cmd.cdb());
	// With a length of 0 the range starts at LBA, which must then exist.
	if (!check_lba_range(cmd, f.lba, f.blocks ? f.blocks : 1))
		return;
	uint64_t blocks = f.blocks ? f.blocks : cmd.lu().num_blocks() - f.lba;
	if (!cmd.lu().caps().prefetch || blocks == 0) {
		cmd.finish_good();
		return;
	}
	command::work_state &w = cmd.work();
	w.lba = f.lba;
	w.blocks = blocks;
	w.cursor = 0;
	prefetch_next(cmd);
}

} // namespace tcmud::scsi
