// SPDX-License-Identifier: GPL-2.0-or-later
// tcmudctl metrics --http: the one HTTP exchange of a scrape, as a client
// sees it through a pipe (what systemd hands over is a socket; the code
// only reads and writes its fds): status lines, headers, the body only for
// GET, and the limits on what a client may send.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "http_metrics.h"

using namespace tcmud;
using namespace tcmud::ctl;

namespace {

int asked = 0;

const metrics_source good = [] {
	++asked;
	return setup_result<std::string>(std::string("# TYPE tcmud_build_info gauge\n"
						     "tcmud_build_info{version=\"0.1.0\"} 1\n"));
};
const metrics_source down = [] {
	++asked;
	return setup_result<std::string>(setup_error{ENOENT, "cannot connect to /run/tcmud/control.sock"});
};

std::string status_line(const std::string &r) { return r.substr(0, r.find("\r\n")); }
std::string body(const std::string &r) { return r.substr(r.find("\r\n\r\n") + 4); }

// serve_http() between two pipes: what the client sent, what came back.
std::string exchange(const std::string &request, bool close_after, int timeout_ms,
		     const metrics_source &m = good)
{
	int req[2], resp[2];
	REQUIRE(pipe2(req, O_CLOEXEC) == 0);
	REQUIRE(pipe2(resp, O_CLOEXEC) == 0);
	REQUIRE(write(req[1], request.data(), request.size()) == ssize_t(request.size()));
	if (close_after)
		close(req[1]);
	REQUIRE(serve_http(req[0], resp[1], timeout_ms, m) == 0);
	close(resp[1]);
	std::string out;
	char buf[4096];
	for (ssize_t n; (n = read(resp[0], buf, sizeof(buf))) > 0;)
		out.append(buf, size_t(n));
	close(req[0]);
	close(resp[0]);
	if (!close_after)
		close(req[1]);
	return out;
}

} // namespace

TEST_CASE("http metrics: GET /metrics is the exposition, with its length and type")
{
	asked = 0;
	std::string r = exchange("GET /metrics HTTP/1.1\r\nHost: localhost:9574\r\n"
				 "Accept: text/plain\r\n\r\n", false, 2000);
	CHECK(status_line(r) == "HTTP/1.1 200 OK");
	CHECK(r.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") !=
	      std::string::npos);
	CHECK(body(r) == "# TYPE tcmud_build_info gauge\ntcmud_build_info{version=\"0.1.0\"} 1\n");
	CHECK(r.find("\r\nContent-Length: " + std::to_string(body(r).size()) + "\r\n") !=
	      std::string::npos);
	CHECK(r.find("\r\nConnection: close\r\n") != std::string::npos);
	CHECK(asked == 1);
	// A query string and bare LFs are fine too.
	r = exchange("GET /metrics?x=1 HTTP/1.0\n\n", false, 2000);
	CHECK(status_line(r) == "HTTP/1.1 200 OK");
}

TEST_CASE("http metrics: HEAD has the headers and no body")
{
	std::string r = http_response("HEAD /metrics HTTP/1.1\r\n\r\n", true, good);
	CHECK(status_line(r) == "HTTP/1.1 200 OK");
	CHECK(body(r).empty());
	// The length of the body a GET gets.
	CHECK(r.find("\r\nContent-Length: " + std::to_string(good()->size()) + "\r\n") !=
	      std::string::npos);
}

TEST_CASE("http metrics: what is not a scrape gets its 4xx, and the daemon is not asked")
{
	asked = 0;
	auto code = [](std::string_view head) {
		return status_line(http_response(head, true, good));
	};
	CHECK(code("POST /metrics HTTP/1.1\r\n\r\n") == "HTTP/1.1 405 Method Not Allowed");
	CHECK(http_response("DELETE / HTTP/1.1\r\n\r\n", true, good).find("\r\nAllow: GET, HEAD\r\n") !=
	      std::string::npos);
	CHECK(code("GET /other HTTP/1.1\r\n\r\n") == "HTTP/1.1 404 Not Found");
	CHECK(code("GET /metricsx HTTP/1.1\r\n\r\n") == "HTTP/1.1 404 Not Found");
	CHECK(code("GET / HTTP/1.1\r\n\r\n") == "HTTP/1.1 200 OK");
	CHECK(code("GET /metrics\r\n\r\n") == "HTTP/1.1 400 Bad Request");          // HTTP/0.9
	CHECK(code("GET  /metrics HTTP/1.1\r\n\r\n") == "HTTP/1.1 400 Bad Request"); // two spaces
	CHECK(code("GET metrics HTTP/1.1\r\n\r\n") == "HTTP/1.1 400 Bad Request");
	CHECK(code("GET /metrics HTTP/2.0\r\n\r\n") == "HTTP/1.1 400 Bad Request");
	CHECK(code("GET /metrics HTTP/1.1 x\r\n\r\n") == "HTTP/1.1 400 Bad Request");
	CHECK(code("\r\n\r\n") == "HTTP/1.1 400 Bad Request");
	CHECK(asked == 0);
}

TEST_CASE("http metrics: a daemon that cannot be asked is a 503 that says why")
{
	std::string r = http_response("GET /metrics HTTP/1.1\r\n\r\n", true, down);
	CHECK(status_line(r) == "HTTP/1.1 503 Service Unavailable");
	CHECK(body(r).find("cannot connect to /run/tcmud/control.sock") != std::string::npos);
}

TEST_CASE("http metrics: a client that stops early or sends too much is cut off")
{
	asked = 0;
	// Hangs up before the blank line.
	CHECK(status_line(exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n", true, 2000)) ==
	      "HTTP/1.1 408 Request Timeout");
	// Says nothing more and keeps the connection: the time limit ends it.
	auto start = std::chrono::steady_clock::now();
	CHECK(status_line(exchange("GET /metrics HTTP/1.1\r\n", false, 200)) ==
	      "HTTP/1.1 408 Request Timeout");
	auto took = std::chrono::steady_clock::now() - start;
	CHECK(took >= std::chrono::milliseconds(190));
	CHECK(took < std::chrono::seconds(5));
	// Headers without end: refused at the limit, not read further.
	std::string huge = "GET /metrics HTTP/1.1\r\nX: " + std::string(2 * http_max_head, 'a');
	int req[2], resp[2];
	REQUIRE(pipe2(req, O_CLOEXEC) == 0);
	REQUIRE(pipe2(resp, O_CLOEXEC) == 0);
	REQUIRE(fcntl(req[1], F_SETFL, O_NONBLOCK) == 0);
	ssize_t sent = write(req[1], huge.data(), huge.size());
	REQUIRE(sent > ssize_t(http_max_head));
	REQUIRE(serve_http(req[0], resp[1], 2000, good) == 0);
	close(resp[1]);
	char buf[512];
	ssize_t n = read(resp[0], buf, sizeof(buf));
	REQUIRE(n > 0);
	CHECK(status_line(std::string(buf, size_t(n))) == "HTTP/1.1 431 Request Header Fields Too Large");
	// What it left unread is still in the pipe: nothing past the limit.
	int left = 0;
	REQUIRE(ioctl(req[0], FIONREAD, &left) == 0);
	CHECK(left == sent - ssize_t(http_max_head));
	for (int fd : {req[0], req[1], resp[0]})
		close(fd);
	CHECK(asked == 0);
}
