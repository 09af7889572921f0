// SPDX-License-Identifier: GPL-2.0-or-later
#include "control/control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace tcmud::control {

bool control_client::connect(const std::string &path, std::string *error)
{
	path_ = path;
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	if (path.empty() || path.size() >= sizeof(sa.sun_path)) {
		*error = "control socket path '" + path + "' is empty or too long";
		return false;
	}
	std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
	fd_.reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!fd_ || ::connect(fd_.get(), reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) < 0) {
		int e = errno;
		*error = "cannot connect to " + path + ": " + strerror(e);
		if (e == ENOENT || e == ECONNREFUSED)
			*error += " — is tcmud running?";
		else if (e == EACCES)
			*error += " — the socket is root's";
		fd_.reset();
		return false;
	}
	return true;
}

bool control_client::request_line(const std::string &line, std::string *reply,
				  std::string *error, int timeout_ms)
{
	std::string out = line + "\n";
	size_t sent = 0;
	while (sent < out.size()) {
		ssize_t n = send(fd_.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*error = "sending to " + path_ + ": " + strerror(errno);
			return false;
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
		if (r == 0) {
			*error = "no reply from " + path_ + " within " +
				 std::to_string(timeout_ms) + " ms";
			return false;
		}
		if (r < 0 && errno == EINTR)
			continue;
		char buf[65536];
		ssize_t n = r < 0 ? -1 : recv(fd_.get(), buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*error = "the daemon closed " + path_ + " without a reply";
			return false;
		}
		buffered_.append(buf, size_t(n));
	}
	reply->assign(buffered_, 0, nl);
	buffered_.erase(0, nl + 1);
	return true;
}

std::optional<control_reply> control_client::request(const control_request &req,
						      std::string *error, int timeout_ms)
{
	std::string line;
	if (!request_line(format_request(req), &line, error, timeout_ms))
		return std::nullopt;
	return parse_reply(line, error);
}

} // namespace tcmud::control
