// SPDX-License-Identifier: GPL-2.0-or-later
// INQUIRY (SPC-5 6.7): standard data and the vital product data pages
// 0x00, 0x80, 0x83 (SPC-5 7.7) and 0xb0, 0xb1, 0xb2 (SBC-4 6.6).
#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <string_view>

#include "byte_order.h"
#include "copy_targets.h"
#include "emulation.h"
#include "logical_unit.h"
#include "third_party_copy.h"

namespace tcmud::scsi {

namespace {

using response = std::array<uint8_t, 512>;

constexpr uint8_t VPD_SUPPORTED_PAGES = 0x00;
constexpr uint8_t VPD_UNIT_SERIAL = 0x80;
constexpr uint8_t VPD_DEVICE_IDENTIFICATION = 0x83;
constexpr uint8_t VPD_THIRD_PARTY_COPY = 0x8f;
constexpr uint8_t VPD_BLOCK_LIMITS = 0xb0;
constexpr uint8_t VPD_BLOCK_DEVICE_CHARACTERISTICS = 0xb1;
constexpr uint8_t VPD_LOGICAL_BLOCK_PROVISIONING = 0xb2;

// Room for the designators; longer serials are cut (SPC-5 allows 255).
constexpr std::size_t MAX_SERIAL = 200;

// Writes s into [off, off + width), space padded; INQUIRY strings are
// printable ASCII, so anything else becomes a space.
void put_ascii(std::span<uint8_t> buf, std::size_t off, std::size_t width, std::string_view s)
{
	for (std::size_t i = 0; i < width; i++) {
		char c = i < s.size() ? s[i] : ' ';
		buf[off + i] = (c >= 0x20 && c < 0x7f) ? static_cast<uint8_t>(c) : ' ';
	}
}

std::size_t standard_inquiry(const logical_unit &lu, response &buf)
{
	constexpr std::size_t length = 66;
	buf[0] = 0x00;  // peripheral qualifier 0, direct-access block device
	buf[2] = 0x06;  // VERSION: SPC-4
	buf[3] = 0x12;  // HISUP, RESPONSE DATA FORMAT 2
	buf[4] = length - 5;
	buf[5] = 0x08;  // 3PC: EXTENDED COPY (LID1), see extended_copy.cpp
	// TPGS: asymmetric access as the configured groups allow it.
	if (lu.reports_port_groups()) {
		const target_port_groups tpg = lu.port_groups();
		if (!tpg.groups.empty())
			buf[5] |= static_cast<uint8_t>((tpg.tpgs & 0x3) << 4);
	}
	buf[7] = 0x02;  // CMDQUE: tagged queuing
	put_ascii(buf, 8, 8, lu.config().vendor);
	put_ascii(buf, 16, 16, lu.config().product);
	put_ascii(buf, 32, 4, lu.config().revision);
	put_be16(buf, 58, 0x00a0);  // version descriptors: SAM-5,
	put_be16(buf, 60, 0x0460);  // SPC-4,
	put_be16(buf, 62, 0x04c0);  // SBC-3
	return length;
}

std::size_t supported_pages(response &buf)
{
	constexpr uint8_t pages[] = {VPD_SUPPORTED_PAGES, VPD_UNIT_SERIAL,
				     VPD_DEVICE_IDENTIFICATION, VPD_THIRD_PARTY_COPY,
				     VPD_BLOCK_LIMITS,
				     VPD_BLOCK_DEVICE_CHARACTERISTICS,
				     VPD_LOGICAL_BLOCK_PROVISIONING};
	buf[1] = VPD_SUPPORTED_PAGES;
	buf[3] = sizeof(pages);
	std::copy(std::begin(pages), std::end(pages), buf.begin() + 4);
	return 4 + sizeof(pages);
}

std::size_t unit_serial_page(std::string_view serial, response &buf)
{
	buf[1] = VPD_UNIT_SERIAL;
	put_be16(buf, 2, serial.size());
	put_ascii(buf, 4, serial.size(), serial);
	return 4 + serial.size();
}

// The NAA designator (copy_targets.cpp derives it from the serial as LIO
// does). Returns the descriptor's length, 0 if the serial has no hex digit.
std::size_t naa_designator(std::string_view serial, std::span<uint8_t> out)
{
	auto found = naa_from_serial(serial);
	if (!found)
		return 0;
	const naa_id naa = *found;
	out[0] = 0x01;  // protocol 0, code set binary
	out[1] = 0x03;  // association: logical unit; type: NAA
	out[3] = naa.size();
	std::copy(naa.begin(), naa.end(), out.begin() + 4);
	return 4 + naa.size();
}

// T10 vendor ID based (SPC-5 7.7.6.4): the 8-byte vendor, then the serial
// (or, without one, the product).
std::size_t t10_designator(const logical_unit &lu, std::string_view serial,
			   std::span<uint8_t> out)
{
	std::string_view tail = serial.empty() ? std::string_view(lu.config().product) : serial;
	tail = tail.substr(0, MAX_SERIAL);
	out[0] = 0x02;  // code set ASCII
	out[1] = 0x01;  // association: logical unit; type: T10 vendor ID
	out[3] = static_cast<uint8_t>(8 + tail.size());
	put_ascii(out, 4, 8, lu.config().vendor);
	put_ascii(out, 12, tail.size(), tail);
	return 12 + tail.size();
}

// With ALUA: the relative target port (type 4) and target port group
// (type 5) designators of the port this node serves (SPC-5 7.7.6.6 and
// 7.7.6.7), which an initiator's ALUA handler (Linux scsi_dh_alua,
// multipath's alua prioritizer) matches against REPORT TARGET PORT GROUPS.
std::size_t port_designators(const logical_unit &lu, std::span<uint8_t> out)
{
	if (!lu.reports_port_groups())
		return 0;
	const target_port_groups tpg = lu.port_groups();
	if (tpg.groups.empty() || !tpg.have_local_port)
		return 0;
	constexpr uint8_t ASSOCIATION_TARGET_PORT = 0x10;
	constexpr uint8_t TYPE_RELATIVE_TARGET_PORT = 0x4;
	constexpr uint8_t TYPE_TARGET_PORT_GROUP = 0x5;
	auto put = [&](std::size_t at, uint8_t type, uint16_t value) {
		out[at] = 0x01;  // code set binary
		out[at + 1] = ASSOCIATION_TARGET_PORT | type;
		out[at + 3] = 4;
		put_be16(out, at + 6, value);
	};
	put(0, TYPE_RELATIVE_TARGET_PORT, tpg.local_relative_port);
	put(8, TYPE_TARGET_PORT_GROUP, tpg.local_group);
	return 16;
}

std::size_t device_identification_page(const logical_unit &lu, std::string_view serial,
				       response &buf)
{
	buf[1] = VPD_DEVICE_IDENTIFICATION;
	std::size_t len = 4;
	len += naa_designator(serial, std::span<uint8_t>(buf).subspan(len));
	len += t10_designator(lu, serial, std::span<uint8_t>(buf).subspan(len));
	len += port_designators(lu, std::span<uint8_t>(buf).subspan(len));
	put_be16(buf, 2, len - 4);
	return len;
}

// Third-party Copy (SPC-5 7.7.18): the descriptors an EXTENDED COPY (LID1)
// copy manager reports: Supported Commands, Parameter Data, Supported
// Descriptors, Supported CSCD Descriptor IDs (none of the special IDs) and
// General Copy Operations. Each descriptor is padded to a multiple of 4.
std::size_t third_party_copy_page(const logical_unit &lu, response &buf)
{
	using namespace xcopy;
	buf[1] = VPD_THIRD_PARTY_COPY;
	std::size_t at = 4;
	auto descriptor = [&](uint16_t type, std::size_t length) {
		put_be16(buf, at, type);
		put_be16(buf, at + 2, length);
		std::size_t start = at + 4;
		at = start + length;
		return start;
	};
	// 0001h Supported Commands: 83h with SA 00h, 84h with SA 00h and 03h.
	std::size_t p = descriptor(0x0001, 8);
	buf[p] = 7;
	const uint8_t commands[] = {0x83, 1, SA_EXTENDED_COPY_LID1,
				    0x84, 2, SA_COPY_STATUS, SA_OPERATING_PARAMETERS};
	std::copy(std::begin(commands), std::end(commands), buf.begin() + p + 1);
	// 0004h Parameter Data.
	p = descriptor(0x0004, 0x1c);
	put_be16(buf, p + 4, MAX_CSCD_DESCRIPTORS);
	put_be16(buf, p + 6, MAX_SEGMENT_DESCRIPTORS);
	put_be32(buf, p + 8, MAX_DESCRIPTOR_LIST_LENGTH);
	put_be32(buf, p + 12, 0);  // MAXIMUM INLINE DATA LENGTH
	// 0008h Supported Descriptors: segment 02h, CSCD E4h.
	p = descriptor(0x0008, 4);
	buf[p] = 2;
	buf[p + 1] = SEGMENT_BLOCK_TO_BLOCK;
	buf[p + 2] = CSCD_IDENTIFICATION;
	// 000Ch Supported CSCD Descriptor IDs: an empty list.
	p = descriptor(0x000c, 4);
	put_be16(buf, p, 0);
	// 8001h General Copy Operations.
	p = descriptor(0x8001, 0x1c);
	put_be32(buf, p, TOTAL_CONCURRENT_COPIES);
	put_be32(buf, p + 4, MAX_IDENTIFIED_COPIES);
	put_be32(buf, p + 8, max_segment_bytes(lu.block_size()));
	buf[p + 12] = static_cast<uint8_t>(std::countr_zero(lu.block_size()));  // DATA SEGMENT GRANULARITY
	buf[p + 13] = 0;  // INLINE DATA GRANULARITY
	put_be16(buf, 2, at - 4);
	return at;
}

std::size_t block_limits_page(const logical_unit &lu, response &buf)
{
	const logical_unit_config &cfg = lu.config();
	buf[1] = VPD_BLOCK_LIMITS;
	put_be16(buf, 2, 0x3c);
	buf[4] = 0x01;  // WSNZ: WRITE SAME with zero blocks is refused
	buf[5] = cfg.max_compare_and_write_blocks;
	put_be16(buf, 6, std::min<uint32_t>(cfg.caps.optimal_io_bytes / cfg.block_size, 0xffff));
	// MAXIMUM and OPTIMAL TRANSFER LENGTH: one command of this size fits
	// the data area; Linux's sd caps its requests (max_sectors_kb) at it.
	put_be32(buf, 8, lu.max_transfer_blocks());
	put_be32(buf, 12, lu.max_transfer_blocks());
	if (cfg.caps.discard) {
		put_be32(buf, 20, cfg.max_unmap_blocks);
		put_be32(buf, 24, cfg.max_unmap_descriptors);
	}
	put_be64(buf, 36, cfg.max_write_same_blocks);
	// WRITE ATOMIC: MAXIMUM ATOMIC TRANSFER LENGTH, ATOMIC ALIGNMENT,
	// ATOMIC TRANSFER LENGTH GRANULARITY; no atomic boundaries (bytes
	// 56-63 zero). Linux sd derives its atomic write unit from these.
	put_be32(buf, 44, lu.max_atomic_transfer_blocks());
	put_be32(buf, 48, cfg.atomic_alignment_blocks);
	put_be32(buf, 52, cfg.atomic_granularity_blocks);
	return 64;
}

std::size_t block_device_characteristics_page(const logical_unit &lu, response &buf)
{
	buf[1] = VPD_BLOCK_DEVICE_CHARACTERISTICS;
	put_be16(buf, 2, 0x3c);
	put_be16(buf, 4, lu.config().medium_rotation_rate);
	return 64;
}

std::size_t logical_block_provisioning_page(const logical_unit &lu, response &buf)
{
	buf[1] = VPD_LOGICAL_BLOCK_PROVISIONING;
	put_be16(buf, 2, 4);
	if (lu.caps().discard) {
		buf[5] = 0xe0;  // LBPU, LBPWS, LBPWS10
		if (lu.caps().discard_zeroes)
			buf[5] |= 0x04;  // LBPRZ = 001b: unmapped reads return zeroes
		buf[6] = 0x02;  // PROVISIONING TYPE: thin
	}
	return 8;
}

// Returns the page length, or 0 for a page we do not have.
std::size_t vpd_page(const logical_unit &lu, uint8_t page, response &buf)
{
	switch (page) {
	case VPD_SUPPORTED_PAGES:
		return supported_pages(buf);
	case VPD_UNIT_SERIAL:
		return unit_serial_page(lu.unit_serial().substr(0, MAX_SERIAL), buf);
	case VPD_DEVICE_IDENTIFICATION:
		return device_identification_page(lu, lu.unit_serial().substr(0, MAX_SERIAL), buf);
	case VPD_THIRD_PARTY_COPY:
		return third_party_copy_page(lu, buf);
	case VPD_BLOCK_LIMITS:
		return block_limits_page(lu, buf);
	case VPD_BLOCK_DEVICE_CHARACTERISTICS:
		return block_device_characteristics_page(lu, buf);
	case VPD_LOGICAL_BLOCK_PROVISIONING:
		return logical_block_provisioning_page(lu, buf);
	default:
		return 0;
	}
}

} // namespace

void emulate_inquiry(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	constexpr uint8_t EVPD = 0x01;  // byte 1
	bool evpd = cdb[1] & EVPD;
	uint8_t page = cdb[2];
	response buf{};
	std::size_t length;
	if (!evpd) {
		// SPC-5: PAGE CODE must be zero when EVPD is zero.
		if (page != 0) {
			finish_invalid_cdb(cmd, 2);
			return;
		}
		length = standard_inquiry(cmd.lu(), buf);
	} else {
		length = vpd_page(cmd.lu(), page, buf);
		if (length == 0) {
			finish_invalid_cdb(cmd, 2);
			return;
		}
	}
	finish_data_in(cmd, std::span<const uint8_t>(buf.data(), length), get_be16(cdb, 3));
}

} // namespace tcmud::scsi
