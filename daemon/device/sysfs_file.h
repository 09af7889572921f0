// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Reading and writing one small sysfs/configfs attribute file. Errors are
// -errno; no exceptions, so callers on any thread can use them.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tcmud {

// Reads the whole attribute (they are at most a page) and drops trailing
// newlines. -errno on failure; -EFBIG past 64 KiB.
int read_attribute(const std::filesystem::path &p, std::string &out);

// Writes `value` in one write(2), as configfs and sysfs store handlers expect
// (a short write would hand the kernel half a value).
int write_attribute(const std::filesystem::path &p, std::string_view value);

// Decimal, or hex with a 0x prefix as uio prints sizes and offsets.
// -EINVAL unless the whole text (after trimming) is a number that fits.
int parse_u64(std::string_view text, uint64_t &out);

int read_u64_attribute(const std::filesystem::path &p, uint64_t &out);

} // namespace tcmud
