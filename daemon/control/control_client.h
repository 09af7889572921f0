// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The client side of the control socket, as tcmudctl uses it.
#include <string>

#include "control/control_protocol.h"
#include "tcmud/unique_fd.h"

namespace tcmud::control {

inline constexpr const char *default_socket_path = "/run/tcmud/tcmud.sock";

class control_client {
public:
	// Connects to `path`. false with *error, e.g. "cannot connect to
	// /run/tcmud/tcmud.sock: No such file or directory — is tcmud running?".
	bool connect(const std::string &path, std::string *error);
	// Sends one request and waits (up to timeout_ms) for its reply line.
	std::optional<control_reply> request(const control_request &req, std::string *error,
					     int timeout_ms = 5000);
	// The same with the raw reply line (tcmudctl --json passes it on).
	bool request_line(const std::string &line, std::string *reply, std::string *error,
			  int timeout_ms = 5000);

private:
	unique_fd fd_;
	std::string path_;
	std::string buffered_; // bytes after the last reply's newline
};

} // namespace tcmud::control
