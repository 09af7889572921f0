// SPDX-License-Identifier: GPL-2.0-or-later
// The control socket: its JSON, its protocol and the server itself.
//
// The first byte picks one of three scripts:
//   json:     parse_json on any text never crashes; a string written by
//             json_writer reads back byte for byte;
//   protocol: answer() to any line (any bytes, or a request aimed at the
//             source's devices) is one line of JSON with a boolean
//             "ok"; ok exactly when parse_request accepts the line; an
//             accepted request formats and parses back to itself; a reply
//             reads back (parse_reply) with the devices the source gave,
//             names and cfgstrings made of any bytes;
//   server:   a real control_server on a socket in /tmp, clients sending
//             any bytes in any chunks: one reply line per request line in
//             order, each valid JSON; a line over the 4 KiB limit is refused
//             (never answered as a request) and the client closed; no
//             client is answered after it was dropped.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "control/control_protocol.h"
#include "control/control_server.h"
#include "control/json.h"
#include "fuzz_support.h"
#include "log/log.h"

using namespace tcmud;
using namespace tcmud::control;
using tcmud::fuzz::input;

namespace {

std::string text_of(std::span<const uint8_t> b)
{
	return std::string(reinterpret_cast<const char *>(b.data()), b.size());
}

std::vector<device_report> make_devices(input &in)
{
	std::vector<device_report> devs(in.range(0, 3));
	for (auto &d : devs) {
		d.name = text_of(in.bytes(in.range(0, 12)));
		d.cfgstring = text_of(in.bytes(in.range(0, 12)));
		d.hba = "user_1";
		d.uio = "uio0";
		d.subtype = "file";
		d.state = "serving";
		d.size_bytes = in.u64();
		d.block_size = in.u32();
		d.nr_queues = uint32_t(in.range(0, 2));
		d.queues.resize(d.nr_queues);
		for (auto &q : d.queues) {
			q.commands = in.u64();
			q.latency[in.range(0, q.latency.size() - 1)] = in.u64();
		}
	}
	return devs;
}

// The oracle's own reader of a reply line: RFC 8259's grammar (raw bytes
// >= 0x80 allowed in strings, as json_writer passes them through), and the
// top-level "ok" and "error" members. It is not parse_json on purpose: a
// writer and a parser that shared a wrong escape would agree with each
// other, and parse_json here, instrumented and building a tree per reply,
// was a third of each server run (perf, the campaign corpus).
class reply_reader {
public:
	explicit reply_reader(std::string_view s) : s_(s) {}

	// False at the first byte outside the grammar; `why` says which.
	FUZZ_ORACLE_LOOP bool read()
	{
		space();
		if (!object(0))
			return false;
		space();
		return at_ == s_.size() || fail("bytes after the value");
	}

	int ok = -1;		// -1: no boolean "ok" member
	bool error_text = false; // an "error" member that is a non-empty string
	std::string why;

private:
	static constexpr int max_depth = 32;

	FUZZ_ORACLE_HELPER bool fail(const char *what)
	{
		why = std::string(what) + " at byte " + std::to_string(at_);
		return false;
	}
	FUZZ_ORACLE_HELPER int peek() const
	{
		return at_ < s_.size() ? static_cast<unsigned char>(s_[at_]) : -1;
	}
	FUZZ_ORACLE_LOOP void space()
	{
		while (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')
			at_++;
	}
	FUZZ_ORACLE_LOOP bool word(std::string_view w)
	{
		if (s_.substr(at_, w.size()) != w)
			return fail("a bad literal");
		at_ += w.size();
		return true;
	}
	// A string; its length, or -1 (its bytes are not kept: only the
	// top-level keys matter, and they are compared in place).
	FUZZ_ORACLE_LOOP long string(std::string_view *raw)
	{
		size_t start = ++at_;
		long len = 0;
		for (;;) {
			int c = peek();
			if (c < 0)
				return fail("an unterminated string"), -1;
			if (c < 0x20)
				return fail("a control byte in a string"), -1;
			at_++;
			if (c == '"')
				break;
			len++;
			if (c != '\\')
				continue;
			c = peek();
			at_++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++, at_++)
					if (!std::isxdigit(peek()))
						return fail("a bad \\u escape"), -1;
			} else if (!c || !std::strchr("\"\\/bfnrt", c)) {
				return fail("a bad escape"), -1;
			}
		}
		if (raw)
			*raw = s_.substr(start, at_ - 1 - start);
		return len;
	}
	FUZZ_ORACLE_LOOP bool digits()
	{
		if (!std::isdigit(peek()))
			return fail("a digit missing");
		while (std::isdigit(peek()))
			at_++;
		return true;
	}
	FUZZ_ORACLE_LOOP bool number()
	{
		if (peek() == '-')
			at_++;
		if (peek() == '0')
			at_++;
		else if (!digits())
			return false;
		if (peek() == '.' && (at_++, !digits()))
			return false;
		if (peek() == 'e' || peek() == 'E') {
			at_++;
			if (peek() == '+' || peek() == '-')
				at_++;
			return digits();
		}
		return true;
	}
	// One value; `top_key` is the member name it belongs to at depth 1.
	FUZZ_ORACLE_LOOP bool value(int depth, std::string_view top_key)
	{
		switch (peek()) {
		case '{': return object(depth + 1);
		case '[': return array(depth + 1);
		case '"': {
			long n = string(nullptr);
			if (n >= 0 && top_key == "error")
				error_text = n > 0;
			return n >= 0;
		}
		case 't':
			if (top_key == "ok")
				ok = 1;
			return word("true");
		case 'f':
			if (top_key == "ok")
				ok = 0;
			return word("false");
		case 'n': return word("null");
		default: return number();
		}
	}
	// The items of an array or the members of an object, after the opening
	// bracket: `item` reads one, then a ',' or `close` must follow.
	template <typename Item> FUZZ_ORACLE_HELPER bool items(char close, Item item)
	{
		at_++;
		space();
		if (peek() == close)
			return at_++, true;
		for (;;) {
			space();
			if (!item())
				return false;
			space();
			if (peek() == close)
				return at_++, true;
			if (peek() != ',')
				return fail(close == ']' ? "no , or ] after an item"
							 : "no , or } after a member");
			at_++;
		}
	}
	FUZZ_ORACLE_LOOP bool array(int depth)
	{
		if (depth > max_depth)
			return fail("nesting too deep");
		return items(']', [&]() FUZZ_ORACLE_HELPER { return value(depth, {}); });
	}
	FUZZ_ORACLE_LOOP bool object(int depth)
	{
		if (peek() != '{')
			return fail("not an object");
		if (depth > max_depth)
			return fail("nesting too deep");
		return items('}', [&]() FUZZ_ORACLE_HELPER {
			std::string_view key;
			if (peek() != '"' || string(&key) < 0)
				return why.empty() ? fail("no member name") : false;
			space();
			if (peek() != ':')
				return fail("no : after a member name");
			at_++;
			space();
			return value(depth, depth == 0 ? key : std::string_view());
		});
	}

	std::string_view s_;
	size_t at_ = 0;
};

void check_reply_line(const std::string &reply, bool want_ok)
{
	FUZZ_CHECK(reply.find('\n') == std::string::npos, "a reply with a newline inside");
	reply_reader r(reply);
	FUZZ_CHECK(r.read(), "a reply that is not JSON: " + r.why);
	FUZZ_CHECK(r.ok >= 0, "a reply without a boolean ok");
	FUZZ_CHECK(r.ok == want_ok, "ok disagrees with parse_request");
	if (!r.ok)
		FUZZ_CHECK(r.error_text, "an error reply without a message");
}

void json_script(input &in)
{
	std::string text = text_of(in.rest());
	auto v = parse_json(text);
	if (!v)
		FUZZ_CHECK(!v.error().message.empty(), "malformed JSON refused without a reason");
	json_writer w;
	w.begin_array().value(std::string_view(text)).end_array();
	auto back = parse_json(w.text());
	FUZZ_CHECK(back && back->type == json_value::kind::array && back->items.size() == 1 &&
			   back->items[0].is_string() && back->items[0].text == text,
		   "a string written by json_writer does not read back: " +
			   (back ? "" : back.error().message));
}

// The line protocol_script sends: any bytes, or a request parse_request
// accepts (random bytes practically never spell one: in the campaigns of
// before, no input got past it, so the oracles below never ran), naming
// a device of the source or any other, maybe with bytes after it.
std::string request_line(input &in, const std::vector<device_report> &devs)
{
	json_writer w;
	switch (in.u8() % 4) {
	case 0: return text_of(in.rest());
	case 1: return "{\"command\":\"list\"}";
	case 2: return "{\"command\":\"stats\"}";
	}
	w.begin_object();
	w.key("command").value("stats");
	if (!devs.empty() && in.flag())
		w.key("device").value(devs[in.range(0, devs.size() - 1)].name);
	else
		w.key("device").value(text_of(in.bytes(in.range(0, 12))));
	w.end_object();
	return w.text() + text_of(in.rest());
}

void protocol_script(input &in)
{
	std::vector<device_report> devs = make_devices(in);
	std::string line = request_line(in, devs);
	auto req = parse_request(line);
	report_source source = [&](bool) { return devs; };
	std::string reply = answer(line, source, 42);
	check_reply_line(reply, req.ok() &&
					(req->device.empty() ||
					 std::any_of(devs.begin(), devs.end(),
						     [&](const device_report &d) { return d.name == req->device; })));
	if (!req) {
		FUZZ_CHECK(!req.error().message.empty(), "a refused request without a reason");
		return;
	}
	std::string again = format_request(*req);
	auto back = parse_request(again);
	FUZZ_CHECK(back && back->what == req->what && back->device == req->device,
		   "a request does not survive format_request/parse_request");
	auto parsed = parse_reply(reply);
	if (!parsed)
		return; // ok:false (no such device): checked above
	FUZZ_CHECK(parsed->time_ns == 42, "time_ns lost");
	size_t want = 0;
	for (const auto &d : devs) {
		if (!req->device.empty() && d.name != req->device)
			continue;
		FUZZ_CHECK(want < parsed->devices.size(), "a device missing from the reply");
		const auto &p = parsed->devices[want++];
		FUZZ_CHECK(p.name == d.name && p.cfgstring == d.cfgstring && p.size_bytes == d.size_bytes,
			   "a device does not read back as sent");
		if (req->what == control_request::kind::stats) {
			FUZZ_CHECK(p.queues.size() == d.queues.size(), "queues lost");
			for (size_t q = 0; q < p.queues.size(); q++)
				FUZZ_CHECK(p.queues[q].commands == d.queues[q].commands &&
						   p.queues[q].latency == d.queues[q].latency,
					   "queue counters do not read back");
		}
	}
	FUZZ_CHECK(want == parsed->devices.size(), "the reply has devices the source has not");
}

// One client of the server script.
struct client {
	int fd = -1;
	std::string sent;     // every byte sent, in order
	std::string received; // every byte read back
	bool eof = false;
};

void server_script(input &in)
{
	static int serial = 0;
	// tmpfs when there is one: a socket inode per run on ext4 /tmp
	// (mknod, unlink) was a tenth of a run.
	static const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	std::string path = std::string(dir) + "/tcmud-fuzz-" + std::to_string(getpid()) + "-" +
			   std::to_string(serial++) + ".sock";
	std::vector<device_report> devs = make_devices(in);
	server_limits limits;
	limits.max_clients = in.range(1, 3);
	auto opened = control_server::open(path, [&](bool) { return devs; }, limits);
	FUZZ_CHECK(opened.ok(), "the server did not open: " + (opened ? "" : opened.error().what()));
	auto server = std::move(*opened);
	std::vector<client> clients(in.range(1, 3));
	for (auto &c : clients) {
		c.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		sockaddr_un sa{};
		sa.sun_family = AF_UNIX;
		std::snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path.c_str());
		FUZZ_CHECK(connect(c.fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0,
			   "connect failed");
	}
	auto pump = [&] {
		for (int i = 0; i < 4; i++) {
			server->dispatch();
			for (auto &c : clients) {
				static char buf[65536]; // static: ASan poisons a stack array per call
				for (;;) {
					ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
					if (n > 0) {
						c.received.append(buf, size_t(n));
						continue;
					}
					if (n == 0)
						c.eof = true;
					break;
				}
			}
		}
	};
	static const char *requests[] = {"{\"command\":\"list\"}\n", "{\"command\":\"stats\"}\n",
					 "{\"command\":\"stats\",\"device\":\"x\"}\n", "\n", "{\n"};
	while (!in.empty()) {
		client &c = clients[in.range(0, clients.size() - 1)];
		std::string chunk;
		switch (in.u8() % 4) {
		case 0: chunk = requests[in.range(0, 4)]; break;
		case 1: chunk = text_of(in.bytes(in.range(0, 64))); break;
		case 2: chunk = std::string(in.range(1, 9000), 'x'); break;
		case 3: pump(); continue;
		}
		ssize_t n = send(c.fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
		if (n > 0)
			c.sent.append(chunk, 0, size_t(n));
	}
	for (auto &c : clients)
		shutdown(c.fd, SHUT_WR);
	// The server closes a client once it has read its EOF and written
	// every reply; after our EOF nothing more can come. (Pumping all 50
	// rounds was most of a run: ~1,200 recv() calls finding nothing.)
	for (int i = 0; i < 50; i++) {
		pump();
		if (std::all_of(clients.begin(), clients.end(), [](const client &c) { return c.eof; }))
			break;
	}

	// What each client was owed.
	for (auto &c : clients) {
		if (c.received.empty() && !c.sent.empty()) {
			// Refused at accept (too many clients) or dropped: no
			// request may have been answered.
			continue;
		}
		if (c.received.rfind("{\"ok\":false,\"error\":\"too many control clients\"}", 0) == 0)
			continue;
		std::vector<std::string> replies;
		for (size_t at = 0; at < c.received.size();) {
			size_t nl = c.received.find('\n', at);
			FUZZ_CHECK(nl != std::string::npos, "a reply without its newline");
			replies.push_back(c.received.substr(at, nl - at));
			at = nl + 1;
		}
		size_t r = 0;
		size_t at = 0;
		while (at < c.sent.size() && r < replies.size()) {
			size_t nl = c.sent.find('\n', at);
			size_t len = (nl == std::string::npos ? c.sent.size() : nl) - at;
			if (len > limits.max_request) {
				std::string_view rep(replies[r]);
				FUZZ_CHECK_KNOWN("F7", rep.find("request longer than") != std::string::npos,
						 "a line of " + std::to_string(len) +
							 " bytes (limit 4096) was answered as a request");
				break; // the server closes the client after refusing
			}
			std::string line = c.sent.substr(at, len);
			auto req = parse_request(line);
			check_reply_line(replies[r], req.ok() &&
							     (req->device.empty() ||
							      std::any_of(devs.begin(), devs.end(),
									  [&](const device_report &d) {
										  return d.name == req->device;
									  })));
			r++;
			if (nl == std::string::npos)
				break;
			at = nl + 1;
		}
		(void)r;
	}
	for (auto &c : clients)
		close(c.fd);
	server.reset();
	unlink(path.c_str());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet = [] {
		set_log_level(log_level::error);
		return true;
	}();
	(void)quiet;
	input in(data, size);
	switch (in.u8() % 3) {
	case 0: json_script(in); break;
	case 1: protocol_script(in); break;
	case 2: server_script(in); break;
	}
	return 0;
}
