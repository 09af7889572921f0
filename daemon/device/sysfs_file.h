// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Reading and writing one small sysfs/configfs attribute file. They run at
// set-up (device open, discovery, take-over, a control request), so errors
// are setup_result: the errno and a message naming the file. No
// exceptions, so callers on any thread can use them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tcmud/setup_result.h"

namespace tcmud {

// Reads the whole attribute (they are at most a page) and drops trailing
// newlines. EFBIG past 64 KiB.
setup_result<std::string> read_attribute(const std::filesystem::path &p);

// Writes `value` in one write(2), as configfs and sysfs store handlers expect
// (a short write would hand the kernel half a value: EIO).
setup_result<void> write_attribute(const std::filesystem::path &p, std::string_view value);

// Decimal, or hex with a 0x prefix as uio prints sizes and offsets.
// nullopt unless the whole text (after trimming) is a number that fits.
std::optional<uint64_t> parse_u64(std::string_view text);

// read_attribute, then parse_u64: EINVAL, naming the file and the text,
// when it is not a number.
setup_result<uint64_t> read_u64_attribute(const std::filesystem::path &p);

} // namespace tcmud
