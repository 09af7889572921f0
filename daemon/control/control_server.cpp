// SPDX-License-Identifier: GPL-2.0-or-later
#include "control/control_server.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "log/log.h"
#include "stats/monotonic_clock.h"

namespace tcmud::control {
namespace {

bool fill_address(const std::string &path, sockaddr_un &sa)
{
	sa = {};
	sa.sun_family = AF_UNIX;
	if (path.empty() || path.size() >= sizeof(sa.sun_path))
		return false;
	std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
	return true;
}

// Something is at `path`: a socket nobody listens on is a crashed daemon's
// leftover and may go; a live socket or any other file stays.
setup_result<void> clear_stale(const std::string &path, const sockaddr_un &sa)
{
	struct stat st;
	if (lstat(path.c_str(), &st) < 0) {
		if (errno == ENOENT)
			return {};
		return setup_error{errno, path};
	}
	if (!S_ISSOCK(st.st_mode))
		return setup_error{EEXIST, path + " is not a socket"};
	unique_fd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!probe)
		return setup_error{errno, "socket"};
	if (connect(probe.get(), reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) == 0)
		return setup_error{EADDRINUSE, "another daemon is serving " + path};
	if (unlink(path.c_str()) < 0 && errno != ENOENT)
		return setup_error{errno, "removing the stale " + path};
	return {};
}

} // namespace

control_server::control_server(std::string path, report_source source, server_limits limits)
	: path_(std::move(path)), source_(std::move(source)), limits_(limits)
{
}

control_server::~control_server()
{
	if (listener_)
		unlink(path_.c_str());
}

setup_result<std::unique_ptr<control_server>> control_server::open(const std::string &path,
								   report_source source,
								   server_limits limits)
{
	std::unique_ptr<control_server> s(new control_server(path, std::move(source), limits));
	if (auto r = s->bind_and_listen(); !r)
		return r.error();
	return s;
}

setup_result<void> control_server::bind_and_listen()
{
	sockaddr_un sa;
	if (!fill_address(path_, sa))
		return setup_error{ENAMETOOLONG,
				   "control socket path '" + path_ + "' is empty or too long"};
	// /run/tcmud normally comes from systemd (RuntimeDirectory=); made here
	// for a daemon started by hand.
	if (auto slash = path_.rfind('/'); slash != std::string::npos && slash > 0)
		if (mkdir(path_.substr(0, slash).c_str(), 0755) < 0 && errno != EEXIST)
			return setup_error{errno, path_.substr(0, slash)};
	if (auto r = clear_stale(path_, sa); !r)
		return r;
	epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
	if (!epoll_)
		return setup_error{errno, "epoll_create1"};
	listener_.reset(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (!listener_)
		return setup_error{errno, "socket"};
	if (bind(listener_.get(), reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) < 0) {
		setup_error e{errno, path_};
		listener_.reset(); // not ours to unlink at destruction
		return e;
	}
	// Before listen(): until then a connect is refused, so there is no
	// moment at which the socket exists with a wider mode and accepts.
	if (chmod(path_.c_str(), 0600) < 0)
		return setup_error{errno, "chmod " + path_};
	if (listen(listener_.get(), 16) < 0)
		return setup_error{errno, "listen on " + path_};
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.fd = listener_.get();
	if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listener_.get(), &ev) < 0)
		return setup_error{errno, "epoll_ctl"};
	return {};
}

void control_server::dispatch()
{
	epoll_event evs[32];
	int n = epoll_wait(epoll_.get(), evs, 32, 0);
	for (int i = 0; i < n; ++i) {
		if (evs[i].data.fd == listener_.get())
			accept_clients();
		else
			on_client(evs[i].data.fd, evs[i].events);
	}
}

void control_server::accept_clients()
{
	for (;;) {
		unique_fd fd(accept4(listener_.get(), nullptr, nullptr,
				     SOCK_NONBLOCK | SOCK_CLOEXEC));
		if (!fd) {
			int err = errno;
			if (err != EAGAIN && err != EINTR && err != ECONNABORTED)
				log_warn("", "control socket: accept: %s", strerror(err));
			return;
		}
		if (clients_.size() >= limits_.max_clients)
			drop_idle(monotonic_ns());
		if (clients_.size() >= limits_.max_clients) {
			// Best effort: the socket buffer takes one short line.
			std::string msg = format_error("too many control clients") + "\n";
			(void)!send(fd.get(), msg.data(), msg.size(), MSG_NOSIGNAL);
			continue;
		}
		epoll_event ev{};
		ev.events = EPOLLIN | EPOLLRDHUP;
		ev.data.fd = fd.get();
		if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.get(), &ev) < 0)
			continue;
		int key = fd.get();
		clients_[key].fd = std::move(fd);
		clients_[key].active_ns = monotonic_ns();
	}
}

void control_server::drop_idle(uint64_t now_ns)
{
	uint64_t limit = limits_.idle_timeout_ms * 1'000'000;
	std::vector<int> idle;
	for (const auto &[fd, c] : clients_)
		if (now_ns - c.active_ns >= limit)
			idle.push_back(fd);
	for (int fd : idle)
		drop(fd);
	if (!idle.empty())
		log_info("", "control socket: %zu idle clients closed to admit a new one",
			 idle.size());
}

void control_server::on_client(int fd, uint32_t events)
{
	auto it = clients_.find(fd);
	if (it == clients_.end())
		return;
	client &c = it->second;
	bool keep = true;
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		keep = read_requests(c);
	if (keep)
		keep = flush(c);
	if (!keep || (c.closing && c.out.empty())) {
		drop(fd);
		return;
	}
	// Wait for room to write only while a reply is pending, and stop
	// reading a client that is being closed.
	epoll_event ev{};
	ev.events = (c.closing ? 0u : uint32_t(EPOLLIN | EPOLLRDHUP)) |
		    (c.out.empty() ? 0u : uint32_t(EPOLLOUT));
	ev.data.fd = fd;
	epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev);
}

// Reads what is there and answers every complete line. False: drop now.
bool control_server::read_requests(client &c)
{
	char buf[4096];
	for (;;) {
		ssize_t n = recv(c.fd.get(), buf, sizeof(buf), 0);
		if (n == 0) {
			// The client is done sending: a last line without its
			// newline is still a request; close once all is written.
			if (!c.in.empty() && c.in.size() <= limits_.max_request)
				c.out += answer(c.in, source_, monotonic_ns(), reload_, version_) + "\n";
			c.in.clear();
			c.closing = true;
			break;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return false;
		}
		c.in.append(buf, size_t(n));
		c.active_ns = monotonic_ns();
		size_t nl;
		while ((nl = c.in.find('\n')) != std::string::npos) {
			// The limit holds per line, also for one that arrived
			// with its newline in the same read as its excess.
			if (nl > limits_.max_request)
				break;
			std::string_view line(c.in.data(), nl);
			c.out += answer(line, source_, monotonic_ns(), reload_, version_);
			c.out += '\n';
			c.in.erase(0, nl + 1);
		}
		if (c.in.size() > limits_.max_request) {
			c.out += format_error("request longer than " +
					      std::to_string(limits_.max_request) + " bytes") + "\n";
			c.closing = true;
			break;
		}
		if (c.out.size() > limits_.max_pending_reply)
			return false; // a client that sends but never reads
	}
	return true;
}

// Writes what the socket takes. False: the client is gone or too slow.
bool control_server::flush(client &c)
{
	while (!c.out.empty()) {
		ssize_t n = send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		c.out.erase(0, size_t(n));
	}
	return true;
}

void control_server::drop(int fd)
{
	epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
	clients_.erase(fd);
}

} // namespace tcmud::control
