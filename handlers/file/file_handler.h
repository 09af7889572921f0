// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The "file" handler: a LUN backed by a regular file or block device.
#include "tcmud/block_backend.h"

namespace tcmud {

extern const handler_ops file_handler;

} // namespace tcmud
