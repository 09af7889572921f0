// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The "ram" handler: a LUN held in the daemon's memory, lost when the device
// is removed or the daemon stops. For tests and benchmarks: with no backing
// I/O at all, it measures what the ring, the SCSI layer and the kernel's
// round trip cost on their own.
#include "tcmud/backstore.h"

namespace tcmud {

extern const handler_ops ram_handler;

} // namespace tcmud
