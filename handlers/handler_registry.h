// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The backstore handlers this daemon serves: those handlers/meson.build
// lists (each handler's meson.build adds itself to builtin_handlers; the
// list generates handler_registry.cpp), so nothing outside handlers/ names one.
// Subtypes match exactly: a device configured for "file2" is never handed
// to "file".
#include <span>
#include <string_view>

#include "tcmud/backstore.h"

namespace tcmud {

std::span<const handler_ops *const> builtin_handlers();
const handler_ops *find_handler(std::string_view subtype);

} // namespace tcmud
