// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The control socket: an AF_UNIX stream socket (mode 0600) answering
// control_protocol.h's requests, one reply line per request line.
//
// It runs on the daemon's control thread, the one that owns the device
// registry, so reading the device list needs no lock; the queue counters it
// reports are read lock-free (queue_stats.h). All its sockets are
// non-blocking and multiplexed on one epoll fd that the control loop polls
// with its other fds: a client that stops reading has its reply buffered
// (up to a limit, then it is dropped), one that sends garbage gets an error
// line, neither can stall device events or the data path.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "control/control_protocol.h"
#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud::control {

struct server_limits {
	size_t max_clients = 16;
	size_t max_request = 4096;          // bytes in one request line
	size_t max_pending_reply = 8 << 20; // unread reply bytes before a drop
	// With max_clients connected, a newcomer displaces clients that sent
	// nothing for this long (so idle connections cannot lock tcmudctl out).
	uint64_t idle_timeout_ms = 10000;
};

class control_server {
public:
	// Binds `path` (creating its directory if missing; a stale socket left
	// by a crashed daemon is replaced, a live one is -EADDRINUSE, anything
	// else at that path EEXIST), or the setup_error saying why not.
	static setup_result<std::unique_ptr<control_server>> open(const std::string &path,
								  report_source source,
								  server_limits limits = {});
	~control_server();
	control_server(const control_server &) = delete;
	control_server &operator=(const control_server &) = delete;

	// Readable when there is something to do; then call dispatch().
	int fd() const { return epoll_.get(); }
	// Accepts, reads, answers and writes what is ready; never blocks.
	void dispatch();

	// What a "reload" request runs (none: it is refused).
	void on_reload(reload_action action) { reload_ = std::move(action); }
	// The daemon's version, sent in every reply (tcmudctl's build_info).
	void identify_as(std::string version) { version_ = std::move(version); }

	size_t clients() const { return clients_.size(); }
	const std::string &path() const { return path_; }

private:
	struct client {
		unique_fd fd;
		std::string in;
		std::string out;
		bool closing = false; // close once `out` is written
		uint64_t active_ns = 0; // connected or last sent a byte
	};

	control_server(std::string path, report_source source, server_limits limits);
	setup_result<void> bind_and_listen();
	void accept_clients();
	void on_client(int fd, uint32_t events);
	bool read_requests(client &c);
	bool flush(client &c);
	void drop(int fd);
	void drop_idle(uint64_t now_ns);

	std::string path_;
	report_source source_;
	reload_action reload_;
	std::string version_;
	server_limits limits_;
	unique_fd epoll_;
	unique_fd listener_;
	std::map<int, client> clients_;
};

} // namespace tcmud::control
