// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The log file administrators know from tcmu-runner: <log_dir>/tcmud.log,
// written in addition to stderr (which systemd sends to the journal).
// logrotate may truncate it under us (copytruncate): it is opened O_APPEND.
#include <string>

#include "tcmud/setup_result.h"

namespace tcmud {

// Installs the sink; an empty dir restores stderr only. At start and on
// SIGHUP: an error names the file that could not be opened (stderr logging
// goes on either way).
setup_result<void> set_log_dir(const std::string &dir);

} // namespace tcmud
