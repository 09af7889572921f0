// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What the SCSI tests share: a logical unit over a RAM backstore, a command
// owner that counts completions, CDB builders and a sense decoder that reads
// both sense formats back, so each test checks key/ASC/ASCQ/field pointer/
// INFORMATION rather than raw bytes.
#include <sys/uio.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "command.h"
#include "logical_unit.h"
#include "ram_backstore.h"

namespace tcmud::scsi::test {

struct test_owner final : command_owner {
	int done = 0;
	int wakes = 0;
	std::function<void(command &)> on_wake;
	void command_done(command &) override { done++; }
	void command_wake(command &cmd) override
	{
		wakes++;
		if (on_wake)
			on_wake(cmd);
	}
};

struct decoded_sense {
	bool descriptor = false;
	uint8_t key = 0;
	uint8_t asc = 0;
	uint8_t ascq = 0;
	std::optional<uint64_t> information;
	bool sksv = false;
	bool c_d = false;
	std::optional<int> bit;  // bit pointer, if BPV
	uint16_t field = 0;
};

// Parses fixed (0x70) or descriptor (0x72) sense; fails the test on others.
decoded_sense decode_sense(std::span<const uint8_t> sense);

struct scsi_result {
	uint8_t status = 0xff;
	std::vector<uint8_t> sense_bytes;
	decoded_sense sense;
	uint64_t read_len = 0;
	std::vector<uint8_t> data_in;
	int done_calls = 0;
};

// A buffer presented as an iovec list cut into pieces of `piece` bytes,
// to exercise the iovec walking (0: one iovec).
struct data_buffer {
	std::vector<uint8_t> bytes;
	std::vector<iovec> iovs;
	data_buffer(std::vector<uint8_t> b, std::size_t piece = 0);
};

struct lu_fixture {
	static constexpr uint32_t BLOCK = 512;
	static constexpr uint64_t BLOCKS = 1024;

	explicit lu_fixture(std::function<void(logical_unit_config &)> tweak = {});

	// Runs one command synchronously (the store must be in synchronous
	// mode) with a data-out buffer, or a data-in buffer of data_in_len.
	scsi_result run(const std::vector<uint8_t> &cdb, const std::vector<uint8_t> &data_out = {},
			std::size_t data_in_len = 0, std::size_t piece = 0);

	// Fills block `lba` of the store with `value`.
	void fill_block(uint64_t lba, uint8_t value, uint64_t count = 1);
	std::span<uint8_t> block(uint64_t lba, uint64_t count = 1);

	std::unique_ptr<logical_unit> lu;
	ram_backstore store;
	test_owner owner;
};

// VERIFY / WRITE AND VERIFY byte 1: BYTCHK 01b (compare data) and 11b
// (compare every block with one block of data), shifted into place.
constexpr uint8_t BYTCHK_DATA = 0x02;
constexpr uint8_t BYTCHK_ONE_BLOCK = 0x06;

std::vector<uint8_t> pattern(std::size_t n, uint8_t seed);

// CDB builders.
std::vector<uint8_t> cdb6(uint8_t op, uint64_t lba, uint8_t len, uint8_t byte1_flags = 0);
std::vector<uint8_t> cdb10(uint8_t op, uint64_t lba, uint16_t len, uint8_t byte1 = 0);
std::vector<uint8_t> cdb12(uint8_t op, uint64_t lba, uint32_t len, uint8_t byte1 = 0);
std::vector<uint8_t> cdb16(uint8_t op, uint64_t lba, uint32_t len, uint8_t byte1 = 0);
std::vector<uint8_t> compare_and_write_cdb(uint64_t lba, uint8_t blocks, uint8_t byte1 = 0);
std::vector<uint8_t> inquiry_cdb(bool evpd, uint8_t page, uint16_t allocation);
std::vector<uint8_t> read_capacity_16_cdb(uint32_t allocation = 32);

// Checks: GOOD, or CHECK CONDITION with this key/ASC/ASCQ.
void require_good(const scsi_result &r);
void require_sense(const scsi_result &r, uint8_t key, asc_ascq code);
// ILLEGAL REQUEST / INVALID FIELD IN CDB pointing at byte (and bit).
void require_invalid_cdb(const scsi_result &r, uint16_t byte, std::optional<int> bit = {});

} // namespace tcmud::scsi::test
