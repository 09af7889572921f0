// SPDX-License-Identifier: GPL-2.0-or-later
#include "control/control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace tcmud::control {

setup_result<void> control_client::connect(const std::string &path)
{
	path_ = path;
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	if (path.empty() || path.size() >= sizeof(sa.sun_path))
		return setup_error{ENAMETOOLONG,
				   "control socket path '" + path + "' is empty or too long"};
	std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
	fd_.reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!fd_ || ::connect(fd_.get(), reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) < 0) {
		setup_error e{errno, "cannot connect to " + path};
		if (e.error == ENOENT || e.error == ECONNREFUSED)
			e.hint = "is tcmud running?";
		else if (e.error == EACCES)
			e.hint = "the socket is root's";
		fd_.reset();
		return e;
	}
	return {};
}

setup_result<std::string> control_client::request_line(const std::string &line, int timeout_ms)
{
	std::string out = line + "\n";
	size_t sent = 0;
	while (sent < out.size()) {
		ssize_t n = send(fd_.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return setup_error{errno, "sending to " + path_};
		}
		sent += size_t(n);
	}
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	size_t nl;
	while ((nl = buffered_.find('\n')) == std::string::npos) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now());
		pollfd p{fd_.get(), POLLIN, 0};
		int r = left.count() > 0 ? poll(&p, 1, int(left.count())) : 0;
		if (r == 0)
			return setup_error{ETIMEDOUT, "no reply from " + path_ + " within " +
							      std::to_string(timeout_ms) + " ms"};
		if (r < 0 && errno == EINTR)
			continue;
		char buf[65536];
		ssize_t n = r < 0 ? -1 : recv(fd_.get(), buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return setup_error{n < 0 ? errno : ECONNRESET,
					   "the daemon closed " + path_ + " without a reply"};
		buffered_.append(buf, size_t(n));
	}
	std::string reply(buffered_, 0, nl);
	buffered_.erase(0, nl + 1);
	return reply;
}

setup_result<control_reply> control_client::request(const control_request &req, int timeout_ms)
{
	auto line = request_line(format_request(req), timeout_ms);
	if (!line)
		return line.error();
	return parse_reply(*line);
}

} // namespace tcmud::control
