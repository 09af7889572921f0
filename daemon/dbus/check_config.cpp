// SPDX-License-Identifier: GPL-2.0-or-later
#include "dbus/check_config.h"

#include <cerrno>
#include <string>

namespace tcmud {

setup_result<void> check_config_string(const handler_ops &h, std::string_view configstr)
{
	std::string prefix = std::string(h.subtype) + "/";
	if (!configstr.starts_with(prefix))
		return setup_error{EINVAL, "configstr \"" + std::string(configstr) +
						   "\" is not for handler " +
						   std::string(h.subtype) + " (it must start with \"" +
						   prefix + "\")"};
	if (!h.check_config)
		return {};
	return h.check_config(configstr.substr(prefix.size()));
}

} // namespace tcmud
