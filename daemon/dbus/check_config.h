// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// CheckConfig's verdict, apart from D-Bus so that it can be tested and
// fuzzed without a bus (tests/fuzz/dbus_check_fuzz.cpp).
#include <string_view>

#include "tcmud/backstore.h"

namespace tcmud {

// Success if the handler accepts configstr ("<subtype>/<cfgstring>"), else
// why not. The subtype must match exactly: "file2/x" is not for the "file"
// handler.
setup_result<void> check_config_string(const handler_ops &h, std::string_view configstr);

} // namespace tcmud
