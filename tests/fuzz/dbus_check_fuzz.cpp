// SPDX-License-Identifier: GPL-2.0-or-later
// D-Bus CheckConfig's string (what targetcli sends before it creates a
// user:file backstore), through check_config_string and the file handler.
//
// Oracles: valid exactly when the string is "file/" followed by a cfgstring
// parse_file_config accepts and check_file_config finds usable; a refusal
// always has a reason; the reason goes back as a D-Bus string, so when the
// request was valid UTF-8 (D-Bus allows nothing else) the reason must be too,
// and hold no NUL (GLib would cut or refuse it).
#include <glib.h>

#include <string>

#include "dbus/check_config.h"
#include "file/file_config.h"
#include "file/file_handler.h"
#include "fuzz_support.h"

using namespace tcmud;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view s(reinterpret_cast<const char *>(data), size);
	// What can reach the method: a D-Bus string is UTF-8 without NUL.
	if (s.find('\0') != std::string_view::npos || !g_utf8_validate(s.data(), gssize(s.size()), nullptr))
		return 0;
	auto checked = check_config_string(file_handler, s);
	// What D-Bus sends back: "" stands for "success" here.
	std::string reason = checked ? std::string() : checked.error().what();
	bool for_file = s.starts_with("file/");
	if (!for_file) {
		FUZZ_CHECK(!checked, "a configstr for another handler accepted");
	} else {
		auto direct = check_file_config(s.substr(5));
		FUZZ_CHECK(checked.ok() == direct.ok() &&
				   (direct || reason == direct.error().what()),
			   "CheckConfig disagrees with the file handler");
		if (checked)
			FUZZ_CHECK(parse_file_config(s.substr(5)).ok(),
				   "valid although the cfgstring does not parse");
	}
	FUZZ_CHECK(reason.find('\0') == std::string::npos, "a NUL inside the reason");
	FUZZ_CHECK(g_utf8_validate(reason.data(), gssize(reason.size()), nullptr),
		   "a reason that is not UTF-8 for a UTF-8 request: " + reason);
	return 0;
}
