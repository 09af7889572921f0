// SPDX-License-Identifier: GPL-2.0-or-later
#include "scsi_harness.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "byte_order.h"

namespace tcmud::scsi::test {

namespace {

void decode_sks(std::span<const uint8_t> sks, decoded_sense &d)
{
	d.sksv = sks[0] & 0x80;
	if (!d.sksv)
		return;
	d.c_d = sks[0] & 0x40;
	if (sks[0] & 0x08)
		d.bit = sks[0] & 0x07;
	d.field = get_be16(sks, 1);
}

void decode_descriptors(std::span<const uint8_t> s, decoded_sense &d)
{
	std::size_t end = std::min<std::size_t>(s.size(), 8u + s[7]);
	for (std::size_t at = 8; at + 2 <= end; at += 2u + s[at + 1]) {
		REQUIRE(at + 2u + s[at + 1] <= end);
		if (s[at] == 0x00) {
			REQUIRE(s[at + 1] == 0x0a);
			REQUIRE((s[at + 2] & 0x80) != 0);
			d.information = get_be64(s, at + 4);
		} else if (s[at] == 0x02) {
			REQUIRE(s[at + 1] == 0x06);
			decode_sks(s.subspan(at + 4, 3), d);
		}
	}
}

} // namespace

decoded_sense decode_sense(std::span<const uint8_t> s)
{
	decoded_sense d;
	REQUIRE(s.size() >= 8);
	uint8_t code = s[0] & 0x7f;
	if (code == 0x70) {
		REQUIRE(s.size() >= 18);
		REQUIRE(s[7] == 10);
		d.key = s[2] & 0x0f;
		d.asc = s[12];
		d.ascq = s[13];
		if (s[0] & 0x80)
			d.information = get_be32(s, 3);
		decode_sks(s.subspan(15, 3), d);
		return d;
	}
	REQUIRE(code == 0x72);
	d.descriptor = true;
	d.key = s[1] & 0x0f;
	d.asc = s[2];
	d.ascq = s[3];
	REQUIRE(s.size() == 8u + s[7]);
	decode_descriptors(s, d);
	return d;
}

data_buffer::data_buffer(std::vector<uint8_t> b, std::size_t piece) : bytes(std::move(b))
{
	if (bytes.empty())
		return;
	if (piece == 0)
		piece = bytes.size();
	for (std::size_t at = 0; at < bytes.size(); at += piece)
		iovs.push_back({bytes.data() + at, std::min(piece, bytes.size() - at)});
}

lu_fixture::lu_fixture(std::function<void(logical_unit_config &)> tweak)
	: store(BLOCK * BLOCKS)
{
	logical_unit_config cfg;
	cfg.block_size = BLOCK;
	cfg.num_blocks = BLOCKS;
	cfg.caps = {.discard = true, .discard_zeroes = true, .write_zeroes = true,
		    .optimal_io_bytes = 4096};
	cfg.vendor = "TCMUD";
	cfg.product = "unit test disk";
	cfg.revision = "0.1";
	cfg.max_compare_and_write_blocks = 4;
	cfg.unit_serial = [] { return std::string("0123456789abcdef-xyz"); };
	if (tweak)
		tweak(cfg);
	// docs:begin scsi-create
	auto created = logical_unit::create(cfg); // one per device, shared by all queues
	REQUIRE(created.ok());                    // else created.error().message says why
	lu = std::move(*created);
	// docs:end scsi-create
}

scsi_result lu_fixture::run(const std::vector<uint8_t> &cdb, const std::vector<uint8_t> &data_out,
			    std::size_t data_in_len, std::size_t piece)
{
	data_buffer buf(data_out.empty() ? std::vector<uint8_t>(data_in_len, 0xee) : data_out, piece);
	// docs:begin scsi-execute
	command cmd; // a daemon keeps one per command slot and reuses it
	int before = owner.done;
	cmd.reset(cdb, buf.iovs, &owner); // owner: a command_owner
	lu->execute(cmd, store);          // store: this thread's backstore_queue
	// Here the store completed at once; with a real backstore command_done()
	// may come later, from a completion on this queue's thread.
	scsi_result r;
	r.done_calls = owner.done - before;
	r.status = cmd.status();
	r.sense_bytes.assign(cmd.sense().begin(), cmd.sense().end()); // <= 96 bytes
	// docs:end scsi-execute
	if (!r.sense_bytes.empty())
		r.sense = decode_sense(r.sense_bytes);
	r.read_len = cmd.read_len();
	r.data_in.assign(buf.bytes.begin(), buf.bytes.begin() + static_cast<std::ptrdiff_t>(
							std::min<uint64_t>(r.read_len, buf.bytes.size())));
	REQUIRE(r.done_calls == 1);
	return r;
}

void lu_fixture::fill_block(uint64_t lba, uint8_t value, uint64_t count)
{
	std::span<uint8_t> b = block(lba, count);
	std::fill(b.begin(), b.end(), value);
}

std::span<uint8_t> lu_fixture::block(uint64_t lba, uint64_t count)
{
	return std::span<uint8_t>(store.bytes()).subspan(lba * BLOCK, count * BLOCK);
}

std::vector<uint8_t> pattern(std::size_t n, uint8_t seed)
{
	std::vector<uint8_t> v(n);
	for (std::size_t i = 0; i < n; i++)
		v[i] = static_cast<uint8_t>(seed + i * 7 + i / 251);
	return v;
}

std::vector<uint8_t> cdb6(uint8_t op, uint64_t lba, uint8_t len, uint8_t byte1_flags)
{
	std::vector<uint8_t> c(6);
	c[0] = op;
	put_be(c, 1, 3, lba & 0x1fffff);
	c[1] |= byte1_flags;
	c[4] = len;
	return c;
}

std::vector<uint8_t> cdb10(uint8_t op, uint64_t lba, uint16_t len, uint8_t byte1)
{
	std::vector<uint8_t> c(10);
	c[0] = op;
	c[1] = byte1;
	put_be32(c, 2, lba);
	put_be16(c, 7, len);
	return c;
}

std::vector<uint8_t> cdb12(uint8_t op, uint64_t lba, uint32_t len, uint8_t byte1)
{
	std::vector<uint8_t> c(12);
	c[0] = op;
	c[1] = byte1;
	put_be32(c, 2, lba);
	put_be32(c, 6, len);
	return c;
}

std::vector<uint8_t> cdb16(uint8_t op, uint64_t lba, uint32_t len, uint8_t byte1)
{
	std::vector<uint8_t> c(16);
	c[0] = op;
	c[1] = byte1;
	put_be64(c, 2, lba);
	put_be32(c, 10, len);
	return c;
}

std::vector<uint8_t> compare_and_write_cdb(uint64_t lba, uint8_t blocks, uint8_t byte1)
{
	std::vector<uint8_t> c(16);
	c[0] = COMPARE_AND_WRITE;
	c[1] = byte1;
	put_be64(c, 2, lba);
	c[13] = blocks;
	return c;
}

std::vector<uint8_t> inquiry_cdb(bool evpd, uint8_t page, uint16_t allocation)
{
	std::vector<uint8_t> c(6);
	c[0] = INQUIRY;
	c[1] = evpd ? 1 : 0;
	c[2] = page;
	put_be16(c, 3, allocation);
	return c;
}

std::vector<uint8_t> read_capacity_16_cdb(uint32_t allocation)
{
	std::vector<uint8_t> c(16);
	c[0] = SERVICE_ACTION_IN_16;
	c[1] = SAI_READ_CAPACITY_16;
	put_be32(c, 10, allocation);
	return c;
}

void require_good(const scsi_result &r)
{
	INFO("sense key " << int(r.sense.key) << " asc " << int(r.sense.asc) << " ascq "
			  << int(r.sense.ascq));
	REQUIRE(r.status == SAM_STAT_GOOD);
	REQUIRE(r.sense_bytes.empty());
}

void require_sense(const scsi_result &r, uint8_t key, asc_ascq code)
{
	REQUIRE(r.status == SAM_STAT_CHECK_CONDITION);
	CHECK(int(r.sense.key) == int(key));
	CHECK(int(r.sense.asc) == int(code.asc));
	CHECK(int(r.sense.ascq) == int(code.ascq));
	REQUIRE(r.read_len == 0);
}

void require_invalid_cdb(const scsi_result &r, uint16_t byte, std::optional<int> bit)
{
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	REQUIRE(r.sense.sksv);
	CHECK(r.sense.c_d);
	CHECK(r.sense.field == byte);
	CHECK(r.sense.bit == bit);
}

} // namespace tcmud::scsi::test
