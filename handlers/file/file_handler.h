// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The "file" handler: a LUN backed by a regular file or block device.
#include "tcmud/backstore.h"

namespace tcmud {

extern const handler_ops file_handler;

} // namespace tcmud
