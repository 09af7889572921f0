// SPDX-License-Identifier: GPL-2.0-or-later
#include "ram/ram_handler.h"

#include "ram/ram_backstore.h"

namespace tcmud {

const handler_ops ram_handler = {
	.subtype = "ram",
	.config_desc = "[LABEL]. A disk in tcmud's memory, for tests and benchmarks: "
		       "its contents are lost when the device is removed or tcmud stops. "
		       "LABEL: optional, letters, digits, '.', '_', '-'.",
	.check_config = check_ram_config,
	.open = ram_backstore::open,
};

} // namespace tcmud
