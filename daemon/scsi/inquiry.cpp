// SPDX-License-Identifier: GPL-2.0-or-later
// INQUIRY (SPC-5 6.7): standard data and the vital product data pages
// 0x00, 0x80, 0x83 (SPC-5 7.7) and 0xb0, 0xb1, 0xb2 (SBC-4 6.6).
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "byte_order.h"
#include "handlers.h"
#include "logical_unit.h"

namespace tcmud::scsi {

namespace {

using response = std::array<uint8_t, 512>;

constexpr uint8_t VPD_SUPPORTED_PAGES = 0x00;
constexpr uint8_t VPD_UNIT_SERIAL = 0x80;
constexpr uint8_t VPD_DEVICE_IDENTIFICATION = 0x83;
constexpr uint8_t VPD_BLOCK_LIMITS = 0xb0;
constexpr uint8_t VPD_BLOCK_DEVICE_CHARACTERISTICS = 0xb1;
constexpr uint8_t VPD_LOGICAL_BLOCK_PROVISIONING = 0xb2;

// The IEEE company ID the Linux SCSI target uses in its NAA designators, so
// that a LUN moved between LIO's own backstores and tcmud keeps its NAA.
constexpr uint32_t LIO_COMPANY_ID = 0x001405;

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
				     VPD_DEVICE_IDENTIFICATION, VPD_BLOCK_LIMITS,
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

int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

// NAA IEEE Registered Extended (NAA 6, SPC-5 7.7.6.6.5): 4 bits NAA, 24 bits
// company ID, then 100 bits of vendor identifier filled with the serial's
// hex digits in order (other characters skipped), as LIO derives its own.
// Returns the designator's length, 0 if the serial has no hex digit.
std::size_t naa_designator(std::string_view serial, std::span<uint8_t> out)
{
	std::array<uint8_t, 16> naa{};
	naa[0] = static_cast<uint8_t>(0x60 | (LIO_COMPANY_ID >> 20));
	naa[1] = static_cast<uint8_t>(LIO_COMPANY_ID >> 12);
	naa[2] = static_cast<uint8_t>(LIO_COMPANY_ID >> 4);
	naa[3] = static_cast<uint8_t>((LIO_COMPANY_ID & 0xf) << 4);
	std::size_t nibble = 7;  // the low nibble of byte 3
	for (char c : serial) {
		int v = hex_value(c);
		if (v < 0)
			continue;
		if (nibble >= naa.size() * 2)
			break;
		naa[nibble / 2] |= static_cast<uint8_t>(nibble % 2 ? v : v << 4);
		nibble++;
	}
	if (nibble == 7)
		return 0;
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

std::size_t device_identification_page(const logical_unit &lu, std::string_view serial,
				       response &buf)
{
	buf[1] = VPD_DEVICE_IDENTIFICATION;
	std::size_t len = 4;
	len += naa_designator(serial, std::span<uint8_t>(buf).subspan(len));
	len += t10_designator(lu, serial, std::span<uint8_t>(buf).subspan(len));
	put_be16(buf, 2, len - 4);
	return len;
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

void handle_inquiry(command &cmd, int64_t)
{
	std::span<const uint8_t> cdb = cmd.cdb();
	bool evpd = cdb[1] & 0x01;
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
