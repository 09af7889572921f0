// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The client side of the control socket, as tcmudctl uses it.
#include <string>

#include "control/control_protocol.h"
#include "tcmud/defaults.h"
#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud::control {

inline constexpr const char *default_socket_path = default_control_socket;

class control_client {
public:
	// Connects to `path`. The error's what() reads e.g. "cannot connect to
	// /run/tcmud/tcmud.sock: No such file or directory — is tcmud running?".
	setup_result<void> connect(const std::string &path);
	// Sends one request and waits (up to timeout_ms) for its reply.
	setup_result<control_reply> request(const control_request &req, int timeout_ms = 5000);
	// The same with the raw reply line (tcmudctl --json passes it on).
	setup_result<std::string> request_line(const std::string &line, int timeout_ms = 5000);

private:
	unique_fd fd_;
	std::string path_;
	std::string buffered_; // bytes after the last reply's newline
};

} // namespace tcmud::control
