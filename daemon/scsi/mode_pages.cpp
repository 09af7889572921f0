// SPDX-License-Identifier: GPL-2.0-or-later
// MODE SENSE(6/10) and MODE SELECT(6/10) (SPC-5 6.12-6.15) with the two pages
// an initiator can use here: caching (0x08, WCE changeable) and control
// (0x0a, D_SENSE changeable). Saved values are not supported.
#include <algorithm>
#include <array>
#include <bit>
#include <optional>

#include "byte_order.h"
#include "emulation.h"
#include "iovec_buffer.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

enum page_control : uint8_t { PC_CURRENT = 0, PC_CHANGEABLE = 1, PC_DEFAULT = 2, PC_SAVED = 3 };

constexpr uint8_t CACHING_PAGE = 0x08;
constexpr uint8_t CONTROL_PAGE = 0x0a;
constexpr uint8_t ALL_PAGES = 0x3f;
constexpr uint8_t ALL_SUBPAGES = 0xff;
constexpr uint8_t CACHING_WCE = 0x04;    // byte 2
constexpr uint8_t CONTROL_D_SENSE = 0x04;  // byte 2
constexpr uint8_t DPOFUA = 0x10;           // device-specific parameter

using page_bytes = std::array<uint8_t, 20>;

struct mode_page {
	uint8_t code;
	uint8_t length;  // including the 2-byte page header
	void (*fill)(const logical_unit &lu, page_control pc, page_bytes &out);
};

void fill_caching(const logical_unit &lu, page_control pc, page_bytes &out)
{
	out[0] = CACHING_PAGE;
	out[1] = 0x12;
	bool wce = pc == PC_CHANGEABLE || (pc == PC_CURRENT ? lu.write_cache_enabled()
							   : lu.config().write_cache_enabled);
	out[2] = wce ? CACHING_WCE : 0;
}

void fill_control(const logical_unit &lu, page_control pc, page_bytes &out)
{
	out[0] = CONTROL_PAGE;
	out[1] = 0x0a;
	if (pc == PC_CHANGEABLE) {
		out[2] = CONTROL_D_SENSE;
		return;
	}
	out[2] = (pc == PC_CURRENT && lu.descriptor_sense()) ? CONTROL_D_SENSE : 0;
	out[3] = 0x10;  // QUEUE ALGORITHM MODIFIER 1: unrestricted reordering
}

constexpr mode_page pages[] = {
	{CACHING_PAGE, 20, fill_caching},
	{CONTROL_PAGE, 12, fill_control},
};

const mode_page *find_page(uint8_t code)
{
	for (const mode_page &p : pages)
		if (p.code == code)
			return &p;
	return nullptr;
}

// The mode parameter header and block descriptor (SPC-5 7.5.5, 7.5.6).
struct sense_request {
	bool ten;     // MODE SENSE(10)
	bool dbd;     // no block descriptor
	bool llbaa;   // long LBA block descriptor (10 only)
	page_control pc;
};

std::size_t put_header(const logical_unit &lu, const sense_request &rq, std::span<uint8_t> buf)
{
	std::size_t header = rq.ten ? 8 : 4;
	std::size_t desc = rq.dbd ? 0 : rq.llbaa ? 16 : 8;
	buf[rq.ten ? 3 : 2] = DPOFUA;
	if (rq.ten) {
		buf[4] = rq.llbaa ? 0x01 : 0;  // LONGLBA
		put_be16(buf, 6, desc);
	} else {
		buf[3] = static_cast<uint8_t>(desc);
	}
	// Changeable values of the descriptor are all zero: geometry is fixed.
	if (desc && rq.pc != PC_CHANGEABLE) {
		uint64_t blocks = lu.num_blocks();
		if (rq.llbaa) {
			put_be64(buf, header, blocks);
			put_be32(buf, header + 12, lu.block_size());
		} else {
			put_be32(buf, header, std::min<uint64_t>(blocks, UINT32_MAX));
			put_be(buf, header + 5, 3, lu.block_size());
		}
	}
	return header + desc;
}

std::size_t put_page(const logical_unit &lu, const mode_page &p, page_control pc,
		     std::span<uint8_t> buf, std::size_t at)
{
	page_bytes bytes{};
	p.fill(lu, pc, bytes);
	std::copy_n(bytes.begin(), p.length, buf.begin() + at);
	return at + p.length;
}

} // namespace

void emulate_mode_sense(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	constexpr uint8_t DBD = 0x08;    // byte 1: no block descriptors
	constexpr uint8_t LLBAA = 0x10;  // byte 1, MODE SENSE(10): long LBA descriptors
	sense_request rq{cdb[0] == MODE_SENSE_10, (cdb[1] & DBD) != 0,
			 cdb[0] == MODE_SENSE_10 && (cdb[1] & LLBAA),
			 static_cast<page_control>(cdb[2] >> 6)};
	uint8_t code = cdb[2] & 0x3f;
	uint8_t subpage = cdb[3];
	if (rq.pc == PC_SAVED) {
		cmd.finish_check_condition(
			sense_builder(ILLEGAL_REQUEST, ASC_SAVING_PARAMETERS_NOT_SUPPORTED)
				.field(cdb_field(2, 7)));
		return;
	}
	const mode_page *one = code == ALL_PAGES ? nullptr : find_page(code);
	if (code != ALL_PAGES && !one) {
		finish_invalid_cdb(cmd, 2, 5);
		return;
	}
	// No page has subpages: only subpage 0, or "all subpages" (0xff).
	if (subpage != 0 && subpage != ALL_SUBPAGES) {
		finish_invalid_cdb(cmd, 3);
		return;
	}
	std::array<uint8_t, 64> buf{};
	std::size_t len = put_header(cmd.lu(), rq, buf);
	for (const mode_page &p : pages)
		if (!one || one == &p)
			len = put_page(cmd.lu(), p, rq.pc, buf, len);
	// MODE DATA LENGTH excludes itself.
	if (rq.ten)
		put_be16(buf, 0, len - 2);
	else
		buf[0] = static_cast<uint8_t>(len - 1);
	uint64_t allocation = rq.ten ? get_be16(cdb, 7) : cdb[4];
	finish_data_in(cmd, std::span<const uint8_t>(buf.data(), len), allocation);
}

namespace {

// What a MODE SELECT parameter list asks to change, applied only once the
// whole list has been checked.
struct mode_changes {
	std::optional<bool> wce;
	std::optional<bool> d_sense;
};

constexpr std::size_t MAX_PARAMETER_LIST = 512;

int8_t highest_bit(uint8_t bits)
{
	return static_cast<int8_t>(7 - std::countl_zero(bits));
}

// Block descriptors may only restate the current geometry (or leave the
// block count zero, "no change").
bool check_block_descriptors(command &cmd, std::span<const uint8_t> list, std::size_t off,
			     std::size_t length, bool long_lba)
{
	const logical_unit &lu = cmd.lu();
	std::size_t size = long_lba ? 16 : 8;
	for (std::size_t at = off; at + size <= off + length; at += size) {
		uint64_t blocks = long_lba ? get_be64(list, at) : get_be32(list, at);
		uint64_t shown = long_lba ? lu.num_blocks() : std::min<uint64_t>(lu.num_blocks(), UINT32_MAX);
		if (blocks != 0 && blocks != shown) {
			finish_invalid_parameter(cmd, static_cast<uint16_t>(at));
			return false;
		}
		uint64_t block_length = long_lba ? get_be32(list, at + 12) : get_be(list, at + 5, 3);
		if (block_length != lu.block_size()) {
			finish_invalid_parameter(cmd, static_cast<uint16_t>(at + (long_lba ? 12 : 5)));
			return false;
		}
	}
	return true;
}

// Checks one page against the current and changeable values: a page of the
// wrong length, or a change to a bit that is not changeable, is an invalid
// field in the parameter list (SPC-5 6.13).
bool check_page(command &cmd, std::span<const uint8_t> list, std::size_t off,
		mode_changes &changes)
{
	const logical_unit &lu = cmd.lu();
	if (list[off] & 0x40) {  // SPF: no page has subpages
		finish_invalid_parameter(cmd, static_cast<uint16_t>(off), 6);
		return false;
	}
	const mode_page *p = find_page(list[off] & 0x3f);
	if (!p) {
		finish_invalid_parameter(cmd, static_cast<uint16_t>(off), 5);
		return false;
	}
	if (list[off + 1] != p->length - 2) {
		finish_invalid_parameter(cmd, static_cast<uint16_t>(off + 1));
		return false;
	}
	page_bytes current{}, changeable{};
	p->fill(lu, PC_CURRENT, current);
	p->fill(lu, PC_CHANGEABLE, changeable);
	for (std::size_t i = 2; i < p->length; i++) {
		auto fixed = static_cast<uint8_t>((list[off + i] ^ current[i]) & ~changeable[i]);
		if (fixed) {
			finish_invalid_parameter(cmd, static_cast<uint16_t>(off + i), highest_bit(fixed));
			return false;
		}
	}
	if (p->code == CACHING_PAGE)
		changes.wce = (list[off + 2] & CACHING_WCE) != 0;
	else
		changes.d_sense = (list[off + 2] & CONTROL_D_SENSE) != 0;
	return true;
}

bool check_pages(command &cmd, std::span<const uint8_t> list, std::size_t off,
		 mode_changes &changes)
{
	while (off < list.size()) {
		if (list.size() - off < 2 || list.size() - off < 2u + list[off + 1]) {
			finish_parameter_list_length_error(cmd);
			return false;
		}
		if (!check_page(cmd, list, off, changes))
			return false;
		off += 2u + list[off + 1];
	}
	return true;
}

bool check_mode_select_cdb(command &cmd)
{
	constexpr uint8_t PF = 0x10;  // byte 1: pages as SPC-5 formats them
	constexpr uint8_t SP = 0x01;  // byte 1: save pages
	std::span<const uint8_t> cdb = cmd.cdb();
	if (!(cdb[1] & PF)) {  // vendor-specific pages, which we have none of
		finish_invalid_cdb(cmd, 1, 4);
		return false;
	}
	if (cdb[1] & SP) {  // saving is not supported
		finish_invalid_cdb(cmd, 1, 0);
		return false;
	}
	return true;
}

} // namespace

void emulate_mode_select(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	bool ten = cdb[0] == MODE_SELECT_10;
	std::size_t length = ten ? get_be16(cdb, 7) : cdb[4];
	if (!check_mode_select_cdb(cmd))
		return;
	if (length > MAX_PARAMETER_LIST) {
		finish_invalid_cdb(cmd, ten ? 7 : 4);
		return;
	}
	if (length == 0) {
		cmd.finish_good();
		return;
	}
	if (!check_data_length(cmd, length))
		return;
	std::array<uint8_t, MAX_PARAMETER_LIST> storage{};
	std::span<uint8_t> list(storage.data(), length);
	copy_from_iovs(cmd.data(), 0, list);
	std::size_t header = ten ? 8 : 4;
	std::size_t descriptors = length < header ? 0 : ten ? get_be16(list, 6) : list[3];
	if (length < header + descriptors) {
		finish_parameter_list_length_error(cmd);
		return;
	}
	bool long_lba = ten && (list[4] & 0x01);
	if (descriptors % (long_lba ? 16 : 8)) {
		finish_invalid_parameter(cmd, ten ? 6 : 3);
		return;
	}
	mode_changes changes;
	if (!check_block_descriptors(cmd, list, header, descriptors, long_lba) ||
	    !check_pages(cmd, list, header + descriptors, changes))
		return;
	if (changes.wce)
		cmd.lu().set_write_cache_enabled(*changes.wce);
	if (changes.d_sense)
		cmd.lu().set_descriptor_sense(*changes.d_sense);
	cmd.finish_good();
}

} // namespace tcmud::scsi
