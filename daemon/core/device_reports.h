// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What the control socket says about the devices this daemon serves.
#include <vector>

#include "control/control_protocol.h"
#include "core/device_registry.h"

namespace tcmud {

// On the control thread (it owns the registry); the queue counters are read
// lock-free from the workers' statistics.
std::vector<control::device_report> device_reports(const device_registry &devices,
						   bool with_stats);

} // namespace tcmud
