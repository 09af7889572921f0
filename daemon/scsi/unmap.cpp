// SPDX-License-Identifier: GPL-2.0-or-later
// UNMAP (SBC-4 5.32). The parameter list is an 8-byte header and 16-byte
// block descriptors (LBA, number of blocks). The whole list is checked
// before anything is discarded, so a bad descriptor leaves the medium as it
// was; then each non-empty descriptor becomes one discard, in order.
//
// The list is copied out of the data-out buffer once, into the command's
// bounce buffer, and only that copy is read: the data area is shared with
// the initiator's side, and a descriptor re-read from it after the check
// could send a discard outside the span this command locked (for example
// into a running COMPARE AND WRITE's range).
#include <array>

#include "byte_order.h"
#include "emulation.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

constexpr uint64_t HEADER_LENGTH = 8;
constexpr uint64_t DESCRIPTOR_LENGTH = 16;

struct unmap_descriptor {
	uint64_t lba = 0;
	uint32_t blocks = 0;
};

// From the private copy of the list (see load_list); index < count.
unmap_descriptor read_descriptor(command &cmd, uint64_t index)
{
	std::span<const uint8_t> d(cmd.bounce().data() + HEADER_LENGTH + index * DESCRIPTOR_LENGTH,
				   DESCRIPTOR_LENGTH);
	return {get_be64(d, 0), get_be32(d, 8)};
}

// The range every descriptor lies in, locked shared as one.
struct unmap_span {
	uint64_t first = UINT64_MAX;
	uint64_t end = 0;
	uint64_t total = 0;
};

// Checks every descriptor (SBC-4: LBA OUT OF RANGE; more blocks than
// MAXIMUM UNMAP LBA COUNT is an invalid field in the parameter list).
bool check_descriptors(command &cmd, uint64_t count, unmap_span &span)
{
	const logical_unit &lu = cmd.lu();
	for (uint64_t i = 0; i < count; i++) {
		unmap_descriptor d = read_descriptor(cmd, i);
		// SBC-4 5.32.3: a descriptor of zero blocks unmaps nothing and is
		// not an error, wherever its LBA points.
		if (d.blocks && !check_lba_range(cmd, d.lba, d.blocks))
			return false;
		span.total += d.blocks;
		if (span.total > lu.config().max_unmap_blocks) {
			finish_invalid_parameter(
				cmd, static_cast<uint16_t>(HEADER_LENGTH + i * DESCRIPTOR_LENGTH + 8));
			return false;
		}
		if (d.blocks) {
			span.first = std::min(span.first, d.lba);
			span.end = std::max(span.end, d.lba + d.blocks);
		}
	}
	return true;
}

// Copies the parameter list (already known to fit the data) to bounce().
void load_list(command &cmd, uint64_t list_length)
{
	auto &copy = cmd.bounce();
	if (copy.size() < list_length)
		copy.resize(list_length);
	copy_from_iovs(cmd.data(), 0, std::span<uint8_t>(copy.data(), list_length));
}

// Returns the number of descriptors, or -1 after finishing the command.
int64_t parse_header(command &cmd, uint64_t list_length)
{
	std::span<const uint8_t> header(cmd.bounce().data(), HEADER_LENGTH);
	// A descriptor length beyond the list is cut to the list; a partial
	// last descriptor is ignored (SBC-4 5.32.2).
	uint64_t descriptor_bytes = std::min<uint64_t>(get_be16(header, 2), list_length - HEADER_LENGTH);
	uint64_t count = descriptor_bytes / DESCRIPTOR_LENGTH;
	if (count > cmd.lu().config().max_unmap_descriptors) {
		finish_invalid_parameter(cmd, 2);
		return -1;
	}
	return static_cast<int64_t>(count);
}

} // namespace

command_task emulate_unmap(command &cmd)
{
	uint64_t list_length = get_be16(cmd.cdb(), 7);
	// SBC-4: a zero-length list is not an error; 1..7 bytes cannot hold
	// the header.
	if (list_length == 0) {
		cmd.finish_good();
		co_return;
	}
	if (list_length < HEADER_LENGTH) {
		finish_parameter_list_length_error(cmd);
		co_return;
	}
	if (!check_data_length(cmd, list_length))
		co_return;
	load_list(cmd, list_length);
	int64_t count = parse_header(cmd, list_length);
	unmap_span span;
	if (count < 0 || !check_descriptors(cmd, static_cast<uint64_t>(count), span))
		co_return;
	if (span.total == 0) {
		cmd.finish_good();
		co_return;
	}

	// With the write cache off the deallocation must be durable before
	// GOOD, as any write is: reads after a crash must not bring back old
	// data while LBPRZ says they return zeroes. Decided once, as for a
	// write: a MODE SELECT turning the cache on and off again between two
	// descriptors must not leave a discard in between unsynced.
	bool fua = !cmd.lu().write_cache_enabled();
	co_await lock_shared(cmd, span.first, span.end - span.first);
	uint32_t bs = cmd.lu().block_size();
	for (uint64_t i = 0; i < static_cast<uint64_t>(count); i++) {
		unmap_descriptor d = read_descriptor(cmd, i);
		if (d.blocks == 0)
			continue;
		// The capacity may have shrunk (resize) since the check.
		if (d.lba > cmd.lu().num_blocks() || d.blocks > cmd.lu().num_blocks() - d.lba) {
			release_lock(cmd);
			cmd.finish_check_condition(
				sense_builder(HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
			co_return;
		}
		no_data_io(cmd, block_op::discard, d.lba * bs, uint64_t{d.blocks} * bs);
		cmd.io().fua = fua;
		int64_t result = co_await submitted(cmd);
		if (finish_if_failed(cmd, result, io_kind::write, d.lba))
			co_return;
	}
	release_lock(cmd);
	cmd.finish_good();
}

} // namespace tcmud::scsi
