// SPDX-License-Identifier: GPL-2.0-or-later
#include "http_metrics.h"

#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "tcmud/write_all.h"

namespace tcmud::ctl {
namespace {

std::string reply(int status, std::string_view reason, std::string_view type,
		  const std::string &body, bool send_body, std::string_view extra = {})
{
	std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
	out += "Content-Type: ";
	out += type;
	out += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
	out += extra;
	out += "Cache-Control: no-store\r\nConnection: close\r\n\r\n";
	if (send_body)
		out += body;
	return out;
}

std::string plain(int status, std::string_view reason, const std::string &body,
		  bool send_body = true, std::string_view extra = {})
{
	return reply(status, reason, "text/plain; charset=utf-8", body, send_body, extra);
}

// Where the head ends (after its blank line), or npos. Bare LFs are
// accepted, as RFC 9112 allows a recipient to.
size_t head_end(std::string_view s)
{
	size_t crlf = s.find("\r\n\r\n");
	size_t lf = s.find("\n\n");
	if (crlf == std::string_view::npos && lf == std::string_view::npos)
		return std::string_view::npos;
	if (lf == std::string_view::npos || (crlf != std::string_view::npos && crlf < lf))
		return crlf + 4;
	return lf + 2;
}

int64_t now_ms()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}


} // namespace

std::string http_response(std::string_view head, bool complete, const metrics_source &metrics)
{
	if (!complete)
		return head.size() >= http_max_head
			       ? plain(431, "Request Header Fields Too Large",
				       "request head over " + std::to_string(http_max_head) + " bytes\n")
			       : plain(408, "Request Timeout", "incomplete request\n");
	std::string_view line = head.substr(0, head.find('\n'));
	if (line.ends_with('\r'))
		line.remove_suffix(1);
	// METHOD SP TARGET SP HTTP/1.x, nothing else (RFC 9112 section 3).
	size_t sp1 = line.find(' ');
	size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
	if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
		return plain(400, "Bad Request", "malformed request line\n");
	std::string_view method = line.substr(0, sp1);
	std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
	std::string_view version = line.substr(sp2 + 1);
	if (!version.starts_with("HTTP/1.") || version.size() != 8 || target.empty() ||
	    target[0] != '/')
		return plain(400, "Bad Request", "malformed request line\n");
	bool head_only = method == "HEAD";
	if (method != "GET" && !head_only)
		return plain(405, "Method Not Allowed", "GET or HEAD only\n", true,
			     "Allow: GET, HEAD\r\n");
	std::string_view path = target.substr(0, target.find('?'));
	if (path == "/")
		return plain(200, "OK", "tcmud metrics: /metrics\n", !head_only);
	if (path != "/metrics")
		return plain(404, "Not Found", "no such page: /metrics has the metrics\n", !head_only);
	auto text = metrics();
	if (!text)
		return plain(503, "Service Unavailable",
			     "tcmud cannot be asked: " + text.error().what() + "\n", !head_only);
	return reply(200, "OK", "text/plain; version=0.0.4; charset=utf-8", *text, !head_only);
}

int serve_http(int in, int out, int timeout_ms, const metrics_source &metrics)
{
	std::string head;
	bool complete = false;
	const int64_t deadline = now_ms() + timeout_ms;
	char buf[1024];
	while (!complete && head.size() < http_max_head) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			break;
		pollfd p{.fd = in, .events = POLLIN, .revents = 0};
		int r = poll(&p, 1, int(left));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		// No more than fits the limit: what follows the head is never read.
		ssize_t n = read(in, buf, std::min(sizeof(buf), http_max_head - head.size()));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		head.append(buf, size_t(n));
		size_t end = head_end(head);
		if (end != std::string::npos) {
			head.resize(end);
			complete = true;
		}
	}
	return write_all(out, http_response(head, complete, metrics)) ? 0 : 1;
}

} // namespace tcmud::ctl
