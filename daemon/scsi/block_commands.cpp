// SPDX-License-Identifier: GPL-2.0-or-later
// The SBC-4 commands a non-removable disk answers without moving user data:
// FORMAT UNIT (SBC-4 5.4), PREVENT ALLOW MEDIUM REMOVAL (5.13), READ DEFECT
// DATA 10/12 (5.20/5.21), PRE-FETCH 10/16 (5.9/5.10) and SEND DIAGNOSTIC
// (SPC-5 6.42).
#include <algorithm>
#include <array>

#include "byte_order.h"
#include "command_task.h"
#include "emulation.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

// The page cache's readahead is asked for at most this much per request
// (io_uring's fadvise takes a 32-bit length).
constexpr uint64_t PREFETCH_CHUNK_BYTES = 1ull << 30;

// Hands [lba, lba + blocks) to the backstore's readahead in chunks.
command_task prefetch(command &cmd, uint64_t lba, uint64_t blocks)
{
	uint32_t bs = cmd.lu().block_size();
	for (uint64_t cursor = 0; cursor < blocks;) {
		uint64_t chunk = std::min<uint64_t>(blocks - cursor, PREFETCH_CHUNK_BYTES / bs);
		no_data_io(cmd, block_op::prefetch, (lba + cursor) * bs, chunk * bs);
		int64_t result = co_await submitted(cmd);
		if (result < 0) {
			cmd.finish_io_error(result, io_kind::read, lba + cursor);
			co_return;
		}
		cursor += chunk;
	}
	// SBC-4 5.9: every block asked for is (being) read into the cache,
	// which has room for all of them.
	cmd.finish_status(SAM_STAT_CONDITION_MET);
}

} // namespace

// FORMAT UNIT is mandatory in SBC-4. Without a parameter list (FMTDATA 0),
// no protection information (FMTPINFO 0) and FFMT 00b the device keeps its
// geometry and there is nothing to lay out on a file: GOOD, and the blocks
// keep their data (SBC-4 leaves the content vendor specific without an
// initialization pattern). A parameter list, protection information or a
// fast format asks for something this unit cannot do.
void emulate_format_unit(command &cmd, int64_t)
{
	constexpr uint8_t FMTDATA = 0x10;  // byte 1: a parameter list follows
	std::span<const uint8_t> cdb = cmd.cdb();
	if (cdb[1] & FMTDATA) {
		finish_invalid_cdb(cmd, 1, 4);
		return;
	}
	cmd.finish_good();
}

// SEND DIAGNOSTIC is mandatory for every device (SPC-5). SELFTEST 1 runs the
// default self-test: a read of the first block through the backstore, whose
// failure is reported as the read's error. SELFTEST 0 with no parameter list
// (or the self-test codes' "abort", which has nothing to abort) is GOOD.
// Background and foreground extended self-tests need a self-test log this
// unit does not keep.
void emulate_send_diagnostic(command &cmd, int64_t)
{
	constexpr unsigned SELF_TEST_CODE_SHIFT = 5;  // byte 1, bits 7..5
	constexpr uint8_t SELFTEST = 0x04;            // byte 1
	std::span<const uint8_t> cdb = cmd.cdb();
	uint8_t code = cdb[1] >> SELF_TEST_CODE_SHIFT;
	bool selftest = cdb[1] & SELFTEST;
	uint16_t list_length = get_be16(cdb, 3);
	if (selftest && code != 0) {
		finish_invalid_cdb(cmd, 1, 7);
		return;
	}
	if (code != 0 && code != 4) {  // 100b: abort background self-test
		finish_invalid_cdb(cmd, 1, 7);
		return;
	}
	if (list_length != 0) {
		// No diagnostic page is supported (SUPPORTED DIAGNOSTIC PAGES is
		// not either), so any list holds an unsupported page.
		finish_invalid_cdb(cmd, 3);
		return;
	}
	if (!selftest) {
		cmd.finish_good();
		return;
	}
	uint32_t bs = cmd.lu().block_size();
	bounce_buffer &bounce = cmd.bounce();
	if (bounce.size() < bs)
		bounce.resize(bs);
	cmd.scratch_iov().assign(1, iovec{bounce.data(), bs});
	block_io &io = cmd.io();
	io.op = block_op::read;
	io.fua = false;
	io.offset = 0;
	io.length = bs;
	io.iov = cmd.scratch_iov();
	cmd.submit([](command &c, int64_t result) {
		if (result < 0) {
			c.finish_io_error(result, io_kind::read, 0);
			return;
		}
		c.finish_good();
	});
}

// The medium cannot be removed (INQUIRY RMB = 0), so there is nothing to
// prevent; PREVENT 00b and 01b are accepted, 1xb is obsolete in SBC-4.
void emulate_prevent_allow_medium_removal(command &cmd, int64_t)
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
void emulate_read_defect_data(command &cmd, int64_t)
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
void emulate_prefetch(command &cmd, int64_t)
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
	run_task(cmd, prefetch(cmd, f.lba, blocks));
}

} // namespace tcmud::scsi
