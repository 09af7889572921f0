// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The sizes the ring side and the SCSI layer must agree on, each defined
// once (docs/glossary.md, "Limits and defaults").
#include <cstddef>

namespace tcmud {

// The longest CDB the kernel passes: SCSI_MAX_VARLEN_CDB_SIZE (8 header bytes
// plus at most 252 additional bytes). The ring's per-command CDB copy has this
// size, so no legal CDB is ever refused and an illegal one is never copied.
inline constexpr std::size_t max_cdb_length = 260;

// The most sense bytes the kernel passes back to the initiator:
// TCMU_SENSE_BUFFERSIZE. ring/tcmu_abi.h's TCMUD_SENSE_BUFFERSIZE is the
// same number as the ring layout states it; command_ring.cpp checks that
// they agree, and tcmu_abi_check.c that the layout agrees with the kernel.
inline constexpr std::size_t sense_buffer_size = 96;

} // namespace tcmud
