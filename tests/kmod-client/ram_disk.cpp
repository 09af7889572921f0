// SPDX-License-Identifier: GPL-2.0-or-later
#include "ram_disk.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

namespace kmod_client {
namespace {

constexpr uint8_t TEST_UNIT_READY = 0x00;
constexpr uint8_t READ_6 = 0x08;
constexpr uint8_t WRITE_6 = 0x0a;
constexpr uint8_t INQUIRY = 0x12;
constexpr uint8_t MODE_SENSE_6 = 0x1a;
constexpr uint8_t READ_CAPACITY_10 = 0x25;
constexpr uint8_t READ_10 = 0x28;
constexpr uint8_t WRITE_10 = 0x2a;
constexpr uint8_t SYNCHRONIZE_CACHE_10 = 0x35;
constexpr uint8_t MODE_SENSE_10 = 0x5a;
constexpr uint8_t READ_16 = 0x88;
constexpr uint8_t WRITE_16 = 0x8a;
constexpr uint8_t SYNCHRONIZE_CACHE_16 = 0x91;
constexpr uint8_t SERVICE_ACTION_IN_16 = 0x9e;
constexpr uint8_t SAI_READ_CAPACITY_16 = 0x10;

constexpr uint8_t ASC_INVALID_OPCODE = 0x20;
constexpr uint8_t ASC_LBA_OUT_OF_RANGE = 0x21;

uint64_t get_be(std::span<const uint8_t> b, size_t off, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = (v << 8) | b[off + i];
	return v;
}

void put_be(uint8_t *b, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[n - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
}

size_t total_length(std::span<const data_segment> data)
{
	size_t n = 0;
	for (const auto &s : data)
		n += s.len;
	return n;
}

// Copies up to `len` bytes between a flat buffer and the segments.
void copy_segments(std::span<const data_segment> data, uint8_t *flat,
		   size_t len, bool to_segments)
{
	for (const auto &s : data) {
		size_t n = std::min(s.len, len);
		if (to_segments)
			std::memcpy(s.base, flat, n);
		else
			std::memcpy(flat, s.base, n);
		flat += n;
		len -= n;
		if (len == 0)
			break;
	}
}

// Returns a small reply (INQUIRY, MODE SENSE, READ CAPACITY), cut to the
// allocation length and the buffer the kernel gave us.
scsi_result reply(std::span<const data_segment> data, uint8_t *buf,
		  size_t len, size_t alloc_len)
{
	copy_segments(data, buf, std::min({len, alloc_len, total_length(data)}), true);
	return {};
}

}  // namespace

scsi_result check_condition(uint8_t key, uint8_t asc)
{
	scsi_result r;
	r.status = SAM_STAT_CHECK_CONDITION;
	r.sense[0] = 0x70;  // current error, fixed format
	r.sense[2] = key;
	r.sense[7] = 10;    // additional sense length
	r.sense[12] = asc;
	r.sense_len = sizeof(r.sense);
	return r;
}

size_t cdb_length(uint8_t opcode)
{
	switch (opcode >> 5) {
	case 0: return 6;
	case 1: case 2: return 10;
	case 4: return 16;
	case 5: return 12;
	default: return 0;
	}
}

ram_disk::ram_disk(uint64_t bytes) : bytes_(bytes), blocks_(bytes / block_size)
{
	void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	data_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
}

ram_disk::~ram_disk()
{
	if (data_)
		munmap(data_, bytes_);
}

scsi_result ram_disk::execute(std::span<const uint8_t> cdb,
			      std::span<const data_segment> data)
{
	switch (cdb[0]) {
	case TEST_UNIT_READY:
	case SYNCHRONIZE_CACHE_10:
	case SYNCHRONIZE_CACHE_16:
		return {};
	case READ_6:
	case WRITE_6: {
		uint32_t n = cdb[4] ? cdb[4] : 256;
		return read_write(get_be(cdb, 1, 3) & 0x1fffff, n, cdb[0] == WRITE_6, data);
	}
	case READ_10:
	case WRITE_10:
		return read_write(get_be(cdb, 2, 4), static_cast<uint32_t>(get_be(cdb, 7, 2)),
				  cdb[0] == WRITE_10, data);
	case READ_16:
	case WRITE_16:
		return read_write(get_be(cdb, 2, 8), static_cast<uint32_t>(get_be(cdb, 10, 4)),
				  cdb[0] == WRITE_16, data);
	case INQUIRY:
		return inquiry(cdb, data);
	case READ_CAPACITY_10:
		return read_capacity_10(data);
	case SERVICE_ACTION_IN_16:
		if ((cdb[1] & 0x1f) == SAI_READ_CAPACITY_16)
			return read_capacity_16(cdb, data);
		return check_condition(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	case MODE_SENSE_6:
	case MODE_SENSE_10:
		return mode_sense(cdb, data);
	default:
		return check_condition(ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
	}
}

scsi_result ram_disk::read_write(uint64_t lba, uint32_t blocks, bool write,
				 std::span<const data_segment> data)
{
	if (lba > blocks_ || blocks > blocks_ - lba)
		return check_condition(ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	size_t len = std::min<size_t>(uint64_t{blocks} * block_size, total_length(data));
	copy_segments(data, data_ + lba * block_size, len, !write);
	return {};
}

scsi_result ram_disk::inquiry(std::span<const uint8_t> cdb,
			      std::span<const data_segment> data)
{
	uint8_t buf[36] = {};
	size_t alloc_len = get_be(cdb, 3, 2);
	if (cdb[1] & 0x01) {
		// Only the list of supported VPD pages, which lists itself.
		if (cdb[2] != 0x00)
			return check_condition(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		buf[3] = 1;
		return reply(data, buf, 5, alloc_len);
	}
	buf[2] = 0x06;  // SPC-4
	buf[3] = 0x02;  // response data format
	buf[4] = sizeof(buf) - 5;
	buf[7] = 0x02;  // CMDQUE
	std::memcpy(buf + 8, "TCMUD   MQ-CLIENT       0001", 28);
	return reply(data, buf, sizeof(buf), alloc_len);
}

scsi_result ram_disk::read_capacity_10(std::span<const data_segment> data)
{
	uint8_t buf[8];
	put_be(buf, std::min<uint64_t>(blocks_ - 1, 0xffffffff), 4);
	put_be(buf + 4, block_size, 4);
	return reply(data, buf, sizeof(buf), sizeof(buf));
}

scsi_result ram_disk::read_capacity_16(std::span<const uint8_t> cdb,
				       std::span<const data_segment> data)
{
	uint8_t buf[32] = {};
	put_be(buf, blocks_ - 1, 8);
	put_be(buf + 8, block_size, 4);
	return reply(data, buf, sizeof(buf), get_be(cdb, 10, 4));
}

// A mode parameter header and, for the caching page or all pages, a caching
// page saying "write cache disabled": enough for sd to attach.
scsi_result ram_disk::mode_sense(std::span<const uint8_t> cdb,
				 std::span<const data_segment> data)
{
	bool ten = cdb[0] == MODE_SENSE_10;
	uint8_t page = cdb[2] & 0x3f;
	size_t header = ten ? 8 : 4;
	size_t alloc_len = ten ? get_be(cdb, 7, 2) : cdb[4];
	uint8_t buf[8 + 20] = {};
	size_t len = header;
	if (page == 0x08 || page == 0x3f) {
		buf[header] = 0x08;
		buf[header + 1] = 0x12;
		len += 20;
	} else {
		return check_condition(ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	}
	if (ten)
		put_be(buf, len - 2, 2);
	else
		buf[0] = static_cast<uint8_t>(len - 1);
	return reply(data, buf, len, alloc_len);
}

}  // namespace kmod_client
