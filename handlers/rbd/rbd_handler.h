// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The "rbd" handler: a LUN backed by a Ceph RBD image (docs/rbd.md).
// Built only where librbd is found (meson option rbd).
#include "tcmud/backstore.h"

namespace tcmud {

extern const handler_ops rbd_handler;

} // namespace tcmud
