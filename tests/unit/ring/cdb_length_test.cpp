// SPDX-License-Identifier: GPL-2.0-or-later
// CDB lengths as the kernel's scsi_command_size computes them.
#include <catch2/catch.hpp>

#include <vector>

#include "ring/cdb_length.h"

using tcmud::scsi_cdb_length;

static size_t len_of(std::vector<uint8_t> prefix)
{
	return scsi_cdb_length(prefix);
}

TEST_CASE("fixed CDB lengths follow the opcode group")
{
	CHECK(len_of({0x00}) == 6);  // TEST UNIT READY
	CHECK(len_of({0x28}) == 10); // READ(10)
	CHECK(len_of({0x42}) == 10); // UNMAP
	CHECK(len_of({0x88}) == 16); // READ(16)
	CHECK(len_of({0xa8}) == 12); // READ(12)
	CHECK(len_of({0xc0}) == 10); // vendor specific
}

TEST_CASE("a variable-length CDB is 8 bytes plus its additional length")
{
	CHECK(len_of({0x7f, 0, 0, 0, 0, 0, 0, 0x18}) == 32); // READ(32)
	CHECK(len_of({0x7f, 0, 0, 0, 0, 0, 0, 252}) == 260);
}

TEST_CASE("a variable-length CDB over 260 bytes has no valid length")
{
	CHECK(len_of({0x7f, 0, 0, 0, 0, 0, 0, 253}) == 0);
}

TEST_CASE("a prefix too short to tell the length gives 0")
{
	CHECK(len_of({}) == 0);
	CHECK(len_of({0x7f, 0, 0}) == 0);
}
