// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// How long a CDB is, decided the way the kernel decides it when it copies the
// CDB into the ring (scsi_command_size): from the opcode's group, or for a
// variable-length CDB (opcode 0x7f) from its ADDITIONAL CDB LENGTH byte.
#include <cstddef>
#include <cstdint>
#include <span>

#include "tcmud/scsi_limits.h"  // max_cdb_length

namespace tcmud {

inline constexpr uint8_t variable_length_opcode = 0x7f;

// Bytes the whole CDB occupies, given its first `prefix` bytes (at least the
// opcode; at least 8 bytes for 0x7f). Returns 0 when `prefix` is too short to
// tell, or when the length would exceed max_cdb_length.
size_t scsi_cdb_length(std::span<const uint8_t> prefix);

} // namespace tcmud
