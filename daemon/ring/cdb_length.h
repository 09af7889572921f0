// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// How long a CDB is, decided the way the kernel decides it when it copies the
// CDB into the ring (scsi_command_size): from the opcode's group, or for a
// variable-length CDB (opcode 0x7f) from its ADDITIONAL CDB LENGTH byte.
#include <cstddef>
#include <cstdint>
#include <span>

namespace tcmud {

// The longest CDB the kernel passes: SCSI_MAX_VARLEN_CDB_SIZE (8 header bytes
// plus at most 252 additional bytes). Our per-command CDB copy has this size,
// so no legal CDB is ever refused and an illegal one is never copied.
inline constexpr size_t max_cdb_length = 260;

inline constexpr uint8_t variable_length_opcode = 0x7f;

// Bytes the whole CDB occupies, given its first `prefix` bytes (at least the
// opcode; at least 8 bytes for 0x7f). Returns 0 when `prefix` is too short to
// tell, or when the length would exceed max_cdb_length.
size_t scsi_cdb_length(std::span<const uint8_t> prefix);

} // namespace tcmud
