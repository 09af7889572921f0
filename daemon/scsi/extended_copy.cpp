// SPDX-License-Identifier: GPL-2.0-or-later
// EXTENDED COPY (LID1) (SPC-4 6.3, SPC-5 6.6): copies blocks between LUNs of
// this daemon (or within one) without the data crossing the initiator.
//
// LIO's own copy engine (target_core_xcopy.c) is reached only through
// spc_parse_cdb, which user backstores never call (passthrough_parse_cdb
// hands EXTENDED COPY to us like any CDB), so this is the copy manager of
// a tcmud LUN. Supported: segment descriptor 02h (block to block) and CSCD
// descriptor E4h naming a LUN by its NAA designator; limits in
// third_party_copy.h, reported by RECEIVE COPY RESULTS and VPD 0x8f.
//
// The whole parameter list is checked before any block moves: header and
// lengths, every CSCD descriptor, every segment descriptor, then the
// targets are resolved (COPY TARGET DEVICE NOT REACHABLE) and every
// segment's LBA range checked. Then the copy runs asynchronously, one
// chunk (at most CHUNK_BYTES, in the slot's bounce buffer) at a time: read
// under the source's range lock (shared), write under the destination's,
// so it never overlaps a COMPARE AND WRITE or a WRITE ATOMIC.
#include <algorithm>

#include "byte_order.h"
#include "copy_targets.h"
#include "emulation.h"
#include "iovec_buffer.h"
#include "logical_unit.h"
#include "third_party_copy.h"

namespace tcmud::scsi {

namespace {

using namespace xcopy;

constexpr asc_ascq ASC_COPY_TARGET_DEVICE_NOT_REACHABLE{0x0d, 0x02};
constexpr asc_ascq ASC_INCORRECT_COPY_TARGET_DEVICE_TYPE{0x0d, 0x03};
constexpr asc_ascq ASC_THIRD_PARTY_DEVICE_FAILURE{0x0d, 0x01};
constexpr asc_ascq ASC_TOO_MANY_TARGET_DESCRIPTORS{0x26, 0x06};
constexpr asc_ascq ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE_CODE{0x26, 0x07};
constexpr asc_ascq ASC_TOO_MANY_SEGMENT_DESCRIPTORS{0x26, 0x08};
constexpr asc_ascq ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE_CODE{0x26, 0x09};

struct cscd_descriptor {
	naa_id naa{};
	bool naa_ok = false;      // an NAA-16 designator of a logical unit
	uint32_t block_length = 0;
	uint16_t at = 0;          // its offset in the parameter list
};

struct segment_descriptor {
	uint16_t source = 0;      // CSCD indexes
	uint16_t destination = 0;
	uint16_t blocks = 0;
	uint64_t source_lba = 0;
	uint64_t destination_lba = 0;
};

// A resolved CSCD: this logical unit (target empty) or another one.
struct endpoint {
	bool resolved = false;
	std::shared_ptr<copy_target> target;
	logical_unit *lu = nullptr;
	backstore_queue *queue = nullptr;       // on this queue's thread
	std::unique_ptr<backstore_queue> opened; // for another LUN's backstore
	bool fua = false;  // its writes: WCE was 0 when the copy started
};

struct copy_job {
	uint8_t list_id = 0;
	bool hold = false;  // LIST ID USAGE 00b
	std::vector<cscd_descriptor> cscds;
	std::vector<segment_descriptor> segments;
	std::vector<endpoint> endpoints;  // per CSCD
	std::size_t segment = 0;  // the segment being copied
	uint64_t bytes = 0;       // copied so far
};

void finish_parameter(command &cmd, asc_ascq code, uint16_t byte)
{
	cmd.finish_check_condition(sense_builder(ILLEGAL_REQUEST, code)
					   .field(parameter_field(byte, -1)));
}

void finish_copy_aborted(command &cmd, asc_ascq code)
{
	cmd.finish_check_condition(sense_builder(COPY_ABORTED, code));
}

// --- parsing: false if the command is finished (an error) ---

bool parse_header(command &cmd, std::span<const uint8_t> list, copy_job &j)
{
	j.list_id = list[0];
	uint8_t usage = (list[1] >> 3) & 0x03;
	if (list[1] & 0xc0) {
		finish_invalid_parameter(cmd, 1, list[1] & 0x80 ? 7 : 6);
		return false;
	}
	// LIST ID USAGE 01b is reserved; 11b (no list identifier) needs 0.
	if (usage == 0x01) {
		finish_invalid_parameter(cmd, 1, 4);
		return false;
	}
	if (usage == 0x03 && j.list_id != 0) {
		finish_invalid_parameter(cmd, 0);
		return false;
	}
	j.hold = usage == 0x00;
	for (uint16_t i = 4; i < 8; i++)
		if (list[i]) {
			finish_invalid_parameter(cmd, i);
			return false;
		}
	return true;
}

bool parse_cscds(command &cmd, std::span<const uint8_t> list, uint32_t end, copy_job &j)
{
	for (uint32_t at = HEADER_LENGTH; at < end; at += CSCD_DESCRIPTOR_LENGTH) {
		auto d = list.subspan(at);
		if (d[0] != CSCD_IDENTIFICATION) {
			finish_parameter(cmd, ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE_CODE,
					 static_cast<uint16_t>(at));
			return false;
		}
		if (end - at < CSCD_DESCRIPTOR_LENGTH) {
			finish_parameter_list_length_error(cmd);
			return false;
		}
		// Peripheral device type 0 (direct access block). LU ID TYPE
		// and NUL are not looked at: the NAA designator alone names the
		// LUN, as in LIO's and SCST's copy managers (and SPC-4 makes
		// NUL obsolete).
		if (d[1] & 0x1f) {
			finish_invalid_parameter(cmd, static_cast<uint16_t>(at + 1),
						 static_cast<int8_t>(7 - std::countl_zero(
							 static_cast<uint8_t>(d[1] & 0x1f))));
			return false;
		}
		cscd_descriptor c;
		c.at = static_cast<uint16_t>(at);
		c.naa_ok = (d[4] & 0x0f) == 0x01 && (d[5] & 0x3f) == 0x03 && d[7] == 16;
		if (c.naa_ok)
			std::copy_n(d.begin() + 8, 16, c.naa.begin());
		c.block_length = static_cast<uint32_t>(get_be(d, 29, 3));
		j.cscds.push_back(c);
	}
	return true;
}

bool parse_segments(command &cmd, std::span<const uint8_t> list, uint32_t begin,
		    uint32_t end, copy_job &j)
{
	for (uint32_t at = begin; at < end; at += SEGMENT_DESCRIPTOR_LENGTH) {
		auto d = list.subspan(at);
		if (d[0] != SEGMENT_BLOCK_TO_BLOCK) {
			finish_parameter(cmd, ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE_CODE,
					 static_cast<uint16_t>(at));
			return false;
		}
		if (end - at < 4 || end - at < SEGMENT_DESCRIPTOR_LENGTH) {
			finish_parameter_list_length_error(cmd);
			return false;
		}
		if (get_be16(d, 2) != SEGMENT_DESCRIPTOR_LENGTH - 4) {
			finish_invalid_parameter(cmd, static_cast<uint16_t>(at + 2));
			return false;
		}
		// Byte 1: DC and CAT only (with equal block sizes and no
		// residue neither changes what is copied).
		if (d[1] & 0xfc) {
			finish_invalid_parameter(cmd, static_cast<uint16_t>(at + 1),
						 static_cast<int8_t>(7 - std::countl_zero(d[1])));
			return false;
		}
		segment_descriptor s;
		s.source = get_be16(d, 4);
		s.destination = get_be16(d, 6);
		// An index past the CSCD list names a copy target the copy
		// manager cannot reach: COPY ABORTED, COPY TARGET DEVICE NOT
		// REACHABLE, as LIO answers and as the EXTENDED COPY text says
		// of a target index that is not accessible.
		if (s.source >= j.cscds.size() || s.destination >= j.cscds.size()) {
			finish_copy_aborted(cmd, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE);
			return false;
		}
		if (get_be16(d, 8) != 0) {
			finish_invalid_parameter(cmd, static_cast<uint16_t>(at + 8));
			return false;
		}
		s.blocks = get_be16(d, 10);
		s.source_lba = get_be64(d, 12);
		s.destination_lba = get_be64(d, 20);
		j.segments.push_back(s);
	}
	return true;
}

// Finds the LUN a CSCD names: this one first (its NAA as VPD 0x83 gives it
// now), then the daemon's other LUNs that this one may reach (copy_groups:
// a LUN outside them is as unreachable as one nobody serves).
bool resolve(command &cmd, copy_job &j, uint16_t index)
{
	endpoint &e = j.endpoints[index];
	if (e.resolved)
		return true;
	const cscd_descriptor &c = j.cscds[index];
	logical_unit &lu = cmd.lu();
	if (c.naa_ok && naa_from_serial(lu.unit_serial()) == c.naa) {
		e.lu = &lu;
		e.queue = &cmd.queue();
	} else if (c.naa_ok && lu.config().copy_targets) {
		e.target = lu.config().copy_targets->find(c.naa, lu.config().copy_self);
		if (e.target && &e.target->lu() == &lu) {
			e.lu = &lu;
			e.queue = &cmd.queue();
		} else if (e.target) {
			e.opened = e.target->open_queue(cmd.queue());
			e.lu = &e.target->lu();
			e.queue = e.opened.get();
		}
	}
	if (!e.queue) {
		finish_copy_aborted(cmd, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE);
		return false;
	}
	// DISK BLOCK LENGTH must be the LUN's (SPC-5 block device CSCD
	// parameters): the copy does not convert block sizes.
	if (c.block_length != e.lu->block_size()) {
		finish_invalid_parameter(cmd, static_cast<uint16_t>(c.at + 29));
		return false;
	}
	// Decided once, as for any write: a MODE SELECT turning the cache on
	// and off again between two chunks must not leave the chunk in between
	// unsynced while GOOD comes back with WCE=0.
	e.fua = !e.lu->write_cache_enabled();
	e.resolved = true;
	return true;
}

bool check_segments(command &cmd, copy_job &j)
{
	for (const segment_descriptor &s : j.segments) {
		if (!resolve(cmd, j, s.source) || !resolve(cmd, j, s.destination))
			return false;
		const endpoint &src = j.endpoints[s.source];
		const endpoint &dst = j.endpoints[s.destination];
		if (src.lu->block_size() != dst.lu->block_size()) {
			finish_copy_aborted(cmd, ASC_INCORRECT_COPY_TARGET_DEVICE_TYPE);
			return false;
		}
		for (auto [lu, lba] : {std::pair{src.lu, s.source_lba},
				       std::pair{dst.lu, s.destination_lba}}) {
			uint64_t cap = lu->num_blocks();
			if (lba > cap || s.blocks > cap - lba) {
				cmd.finish_check_condition(
					sense_builder(COPY_ABORTED, ASC_LBA_OUT_OF_RANGE)
						.information(lba));
				return false;
			}
		}
	}
	return true;
}

// --- the copy ---

// How a copy ended: its held result says DONE or DONE WITH ERRORS, and a
// failed copy finishes the command elsewhere (with its sense).
enum class copy_end : uint8_t { succeeded, failed };

void finish_copy(command &cmd, const copy_job &j, copy_end end)
{
	const bool ok = end == copy_end::succeeded;
	if (j.hold)
		cmd.lu().copy_results().hold(
			j.list_id, {.held = true,
				    .status = ok ? STATUS_DONE : STATUS_DONE_WITH_ERRORS,
				    .segments = static_cast<uint16_t>(j.segment),
				    .bytes = j.bytes});
	if (ok)
		cmd.finish_good();
}

void finish_copy_failed(command &cmd, const copy_job &j, int64_t error, io_kind kind)
{
	finish_copy(cmd, j, copy_end::failed);
	asc_ascq code = ASC_THIRD_PARTY_DEVICE_FAILURE;
	if (error == -EIO)
		code = kind == io_kind::write ? ASC_WRITE_ERROR : ASC_UNRECOVERED_READ_ERROR;
	finish_copy_aborted(cmd, code);
}

// Parses and checks the list (copied once: the data-out buffer is shared
// memory that could change between a check and its use); nullptr if the
// command is finished.
std::unique_ptr<copy_job> parse_list(command &cmd)
{
	uint32_t length = get_be32(cmd.cdb(), 10);
	// SPC-5: a PARAMETER LIST LENGTH of zero is not an error.
	if (length == 0) {
		cmd.finish_good();
		return nullptr;
	}
	if (!check_data_length(cmd, length))
		return nullptr;
	if (length < HEADER_LENGTH) {
		finish_parameter_list_length_error(cmd);
		return nullptr;
	}
	std::array<uint8_t, HEADER_LENGTH> header{};
	copy_from_iovs(cmd.data(), 0, header);
	uint32_t cscd_length = get_be16(header, 2);
	uint32_t segment_length = get_be32(header, 8);
	uint32_t inline_length = get_be32(header, 12);
	if (uint64_t{HEADER_LENGTH} + cscd_length + segment_length + inline_length > length) {
		finish_parameter_list_length_error(cmd);
		return nullptr;
	}
	// Both lists together beyond MAXIMUM DESCRIPTOR LIST LENGTH (VPD 0x8f,
	// RECEIVE COPY OPERATING PARAMETERS) is the parameter list's length
	// error, checked before the counts, as LIO and tcmu-runner do.
	if (cscd_length + segment_length > MAX_DESCRIPTOR_LIST_LENGTH) {
		finish_parameter_list_length_error(cmd);
		return nullptr;
	}
	if (cscd_length / CSCD_DESCRIPTOR_LENGTH > MAX_CSCD_DESCRIPTORS) {
		finish_parameter(cmd, ASC_TOO_MANY_TARGET_DESCRIPTORS, 2);
		return nullptr;
	}
	if (segment_length / SEGMENT_DESCRIPTOR_LENGTH > MAX_SEGMENT_DESCRIPTORS) {
		finish_parameter(cmd, ASC_TOO_MANY_SEGMENT_DESCRIPTORS, 8);
		return nullptr;
	}
	// MAXIMUM INLINE DATA LENGTH is 0: no segment type we have uses it.
	if (inline_length != 0) {
		finish_invalid_parameter(cmd, 12);
		return nullptr;
	}
	// Bounded by the two checks above: at most 16 + 543 + 1819 bytes.
	// EXTENDED COPY is the one command that allocates (its lists).
	auto j = std::make_unique<copy_job>();
	std::vector<uint8_t> list(HEADER_LENGTH + cscd_length + segment_length);
	copy_from_iovs(cmd.data(), 0, list);
	uint32_t segments_at = HEADER_LENGTH + cscd_length;
	if (!parse_header(cmd, list, *j) || !parse_cscds(cmd, list, segments_at, *j) ||
	    !parse_segments(cmd, list, segments_at, segments_at + segment_length, *j))
		return nullptr;
	j->endpoints.resize(j->cscds.size());
	if (!check_segments(cmd, *j))
		return nullptr;
	return j;
}

} // namespace

// Each segment in chunks of at most CHUNK_BYTES through the bounce buffer:
// read under the source's range lock (shared), written under the
// destination's. The queues opened on other backstores close with `j`,
// when the frame goes; a queue may go from inside its last completion
// (backstore.h).
command_task emulate_extended_copy(command &cmd)
{
	std::unique_ptr<copy_job> j = parse_list(cmd);
	if (!j)
		co_return;
	for (; j->segment < j->segments.size(); j->segment++) {
		const segment_descriptor &s = j->segments[j->segment];
		const endpoint &src = j->endpoints[s.source];
		const endpoint &dst = j->endpoints[s.destination];
		uint32_t bs = src.lu->block_size();
		uint64_t chunk_limit = std::max<uint32_t>(1, CHUNK_BYTES / bs);
		// Within one LUN, a destination just above an overlapping source
		// is copied from the end, so no chunk reads what an earlier one
		// wrote.
		bool backward = src.lu == dst.lu && s.destination_lba > s.source_lba &&
				s.destination_lba < s.source_lba + s.blocks;
		for (uint64_t done = 0; done < s.blocks;) {
			uint64_t chunk = std::min<uint64_t>(s.blocks - done, chunk_limit);
			uint64_t at = backward ? s.blocks - done - chunk : done;
			std::span<uint8_t> buffer = bounce_space(cmd, chunk * bs);

			co_await lock_shared(cmd, src.lu->ranges(), s.source_lba + at, chunk);
			buffer_io(cmd, block_op::read, (s.source_lba + at) * bs, buffer);
			int64_t result = co_await submitted(cmd, *src.queue);
			src.lu->ranges().unlock(cmd.range());
			if (result < 0) {
				finish_copy_failed(cmd, *j, result, io_kind::read);
				co_return;
			}

			co_await lock_shared(cmd, dst.lu->ranges(), s.destination_lba + at, chunk);
			buffer_io(cmd, block_op::write, (s.destination_lba + at) * bs, buffer);
			cmd.io().fua = dst.fua;
			result = co_await submitted(cmd, *dst.queue);
			dst.lu->ranges().unlock(cmd.range());
			if (result < 0) {
				finish_copy_failed(cmd, *j, result, io_kind::write);
				co_return;
			}
			done += chunk;
			j->bytes += chunk * bs;
		}
	}
	finish_copy(cmd, *j, copy_end::succeeded);
}

} // namespace tcmud::scsi
