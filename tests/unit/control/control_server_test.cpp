// SPDX-License-Identifier: GPL-2.0-or-later
// The control socket end to end in one process: a queue worker serves the
// in-process kernel ring model with the real file backstore, the control
// server answers over a real AF_UNIX socket from its own thread, and
// tcmudctl's client reads the counts move as commands complete. Also what
// a bad or slow client gets, and the socket file's life cycle.
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <thread>
#include <vector>

#include "control/control_client.h"
#include "control/control_server.h"
#include "handler_registry.h"
#include "core/queue_worker.h"
#include "kernel_ring_model.h"
#include "worker_rig.h"
#include "log/log.h"
#include "stats_view.h"

using namespace tcmud;
using namespace tcmud::control;
using tcmud::test::kernel_ring_model;

namespace {

constexpr uint32_t block = 512;
constexpr uint64_t blocks = 2048;

// A temporary directory for the socket, removed with everything in it.
struct temp_dir {
	std::filesystem::path path;
	temp_dir()
	{
		char tmpl[] = "/tmp/tcmud-ctl-XXXXXX";
		REQUIRE(mkdtemp(tmpl));
		path = tmpl;
	}
	~temp_dir() { std::filesystem::remove_all(path); }
	std::string sock() const { return (path / "tcmud.sock").string(); }
};

// One queue worker on the ring model, as in tests/unit/core.
struct queue_harness : tcmud::test::single_queue_rig {
	queue_harness() : single_queue_rig(block, blocks, "file/ctl:") {}

	void run(size_t want)
	{
		interrupt();
		collect(want);
	}
};

std::vector<uint8_t> cdb10(uint8_t op, uint32_t lba, uint16_t count)
{
	return {op, 0, uint8_t(lba >> 24), uint8_t(lba >> 16), uint8_t(lba >> 8), uint8_t(lba),
		0, uint8_t(count >> 8), uint8_t(count), 0};
}

// The server on its own thread, as the daemon's control loop runs it.
struct server_thread {
	std::unique_ptr<control_server> server;
	std::atomic<bool> stop{false};
	std::thread thread;

	server_thread(const std::string &path, report_source source, server_limits limits = {})
	{
		auto opened = control_server::open(path, std::move(source), limits);
		INFO((opened ? "" : opened.error().what()));
		REQUIRE(opened);
		server = std::move(*opened);
		thread = std::thread([this] {
			while (!stop.load()) {
				pollfd p{server->fd(), POLLIN, 0};
				if (poll(&p, 1, 20) > 0)
					server->dispatch();
			}
		});
	}
	~server_thread()
	{
		stop = true;
		thread.join();
	}
};

report_source one_device(queue_harness &h)
{
	return [&h](bool with_stats) {
		device_report d;
		d.name = "lun0";
		d.hba = "user_1";
		d.uio = "uio0";
		d.subtype = "file";
		d.cfgstring = h.unit.file.string();
		d.state = "serving";
		d.size_bytes = blocks * block;
		d.block_size = block;
		d.nr_queues = 1;
		if (with_stats)
			d.queues.push_back(h.worker->stats().snapshot());
		return std::vector<device_report>{d};
	};
}

// A raw client: what tcmudctl's client would never send.
int raw_connect(const std::string &path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	std::snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path.c_str());
	REQUIRE(connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0);
	return fd;
}

std::string read_line(int fd)
{
	std::string s;
	char c;
	pollfd p{fd, POLLIN, 0};
	while (poll(&p, 1, 5000) > 0 && read(fd, &c, 1) == 1 && c != '\n')
		s += c;
	return s;
}

} // namespace

TEST_CASE("control socket: tcmudctl's client sees a queue's counts move as commands complete")
{
	set_log_level(log_level::warn);
	temp_dir dir;
	queue_harness h;
	server_thread srv(dir.sock(), one_device(h));

	control_client client;
	REQUIRE(client.connect(dir.sock()));
	auto listed = client.request({control_request::kind::list, {}});
	REQUIRE(listed);
	REQUIRE(listed->devices.size() == 1);
	REQUIRE(listed->devices[0].nr_queues == 1);
	REQUIRE(listed->devices[0].block_size == block);

	auto before = client.request({control_request::kind::stats, "lun0"});
	REQUIRE(before);
	REQUIRE(before->devices[0].queues.at(0).commands == 0);

	// 12 reads of 1 block, 4 writes of 8 blocks, 1 unknown opcode.
	size_t queued = 0;
	for (uint32_t i = 0; i < 12; ++i)
		queued += h.model.queue_command(cdb10(0x28, i, 1), {}, block).has_value();
	std::vector<uint8_t> data(8 * block, 0x5a);
	for (uint32_t i = 0; i < 4; ++i)
		queued += h.model.queue_command(cdb10(0x2a, 100 + i * 8, 8), data).has_value();
	queued += h.model.queue_command(std::vector<uint8_t>{0xc5, 0, 0, 0, 0, 0}).has_value();
	REQUIRE(queued == 17);
	h.run(17);

	auto after = client.request({control_request::kind::stats, {}});
	REQUIRE(after);
	const stats::queue_snapshot &q = after->devices.at(0).queues.at(0);
	CHECK(q.commands == 17);
	CHECK(q.bytes_read == 12 * block);
	CHECK(q.bytes_written == 4 * 8 * block);
	CHECK(q.errors == 1);
	CHECK(q.sense_keys[0x5] == 1); // ILLEGAL REQUEST
	CHECK(q.depth == 0);
	CHECK(q.max_depth >= 1);
	uint64_t timed = 0;
	for (uint64_t n : q.latency)
		timed += n;
	CHECK(timed == 17); // every command's latency, once
	REQUIRE(after->time_ns > before->time_ns);

	auto rows = tcmud::ctl::build_rows(*before, *after);
	REQUIRE(rows.size() == 2);
	CHECK(rows[0].rates.commands == 17);
	CHECK(rows[0].rates.iops > 0);
	CHECK(rows[0].rates.p50_ns > 0);
}

TEST_CASE("control socket: an unknown command and a malformed line get error replies on the same connection")
{
	set_log_level(log_level::warn);
	temp_dir dir;
	server_thread srv(dir.sock(), [](bool) { return std::vector<device_report>{}; });
	int fd = raw_connect(dir.sock());
	std::string req = "{\"command\":\"frobnicate\"}\nnot json\n{\"command\":\"list\"}\n";
	REQUIRE(write(fd, req.data(), req.size()) == ssize_t(req.size()));
	CHECK(read_line(fd) == R"j({"ok":false,"error":"unknown command 'frobnicate' (list, stats, reload)"})j");
	CHECK(read_line(fd).find(R"({"ok":false,"error":"malformed request (at byte 0)") == 0);
	CHECK(read_line(fd).find(R"({"ok":true,"time_ns":)") == 0);
	close(fd);
}

TEST_CASE("control socket: an over-long request is answered with an error and the connection closed")
{
	set_log_level(log_level::warn);
	temp_dir dir;
	server_limits lim;
	lim.max_request = 256;
	server_thread srv(dir.sock(), [](bool) { return std::vector<device_report>{}; }, lim);
	int fd = raw_connect(dir.sock());
	std::string junk(1000, 'x');
	REQUIRE(write(fd, junk.data(), junk.size()) == ssize_t(junk.size()));
	CHECK(read_line(fd) == R"({"ok":false,"error":"request longer than 256 bytes"})");
	char c;
	pollfd p{fd, POLLIN, 0};
	REQUIRE(poll(&p, 1, 5000) == 1);
	CHECK(read(fd, &c, 1) == 0); // closed by the server
	close(fd);
}

TEST_CASE("control socket: a line over the limit is refused even when its newline came with it")
{
	set_log_level(log_level::warn);
	temp_dir dir;
	server_limits lim;
	lim.max_request = 256;
	server_thread srv(dir.sock(), [](bool) { return std::vector<device_report>{}; }, lim);
	int fd = raw_connect(dir.sock());
	// 300 bytes and the newline in one write: one read sees the whole line.
	std::string line = "{\"command\":\"list\",\"pad\":\"" + std::string(260, 'x') + "\"}\n";
	REQUIRE(write(fd, line.data(), line.size()) == ssize_t(line.size()));
	CHECK(read_line(fd) == R"({"ok":false,"error":"request longer than 256 bytes"})");
	close(fd);
}

TEST_CASE("control socket: idle clients do not lock tcmudctl out")
{
	set_log_level(log_level::warn);
	temp_dir dir;
	queue_harness h;
	server_limits lim;
	lim.max_clients = 2;
	lim.idle_timeout_ms = 100;
	server_thread srv(dir.sock(), one_device(h), lim);
	int idle1 = raw_connect(dir.sock());
	int idle2 = raw_connect(dir.sock());
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
	while (srv.server->clients() < 2 && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	REQUIRE(srv.server->clients() == 2);
	std::this_thread::sleep_for(std::chrono::milliseconds(200));

	control_client client;
	REQUIRE(client.connect(dir.sock()));
	CHECK(client.request({control_request::kind::list, {}}));
	close(idle1);
	close(idle2);
}

TEST_CASE("control socket: a client that never reads is dropped while others are still served")
{
	set_log_level(log_level::warn);
	temp_dir dir;
	queue_harness h;
	server_limits lim;
	lim.max_pending_reply = 64 << 10;
	server_thread srv(dir.sock(), one_device(h), lim);
	int hog = raw_connect(dir.sock());
	// Requests whose replies (~1 KiB each) pile up unread: the socket
	// buffers fill, then the server's pending limit is passed.
	REQUIRE(fcntl(hog, F_SETFL, O_NONBLOCK) == 0);
	std::string req = "{\"command\":\"stats\"}\n";
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
	bool dropped = false;
	while (!dropped && std::chrono::steady_clock::now() < deadline) {
		ssize_t n = send(hog, req.data(), req.size(), MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN)
			dropped = true; // EPIPE / ECONNRESET: the server closed it
		else if (n < 0)
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	CHECK(dropped);
	CHECK(srv.server->clients() <= 1);

	control_client client;
	REQUIRE(client.connect(dir.sock()));
	REQUIRE(client.request({control_request::kind::list, {}}));
	close(hog);
}

TEST_CASE("control socket: mode 0600; a stale socket is replaced, a live one refused, gone on close")
{
	set_log_level(log_level::error);
	temp_dir dir;
	{
		// A crashed daemon's leftover: bound, nobody listening.
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		sockaddr_un sa{};
		sa.sun_family = AF_UNIX;
		std::snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", dir.sock().c_str());
		REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0);
		close(fd);
	}
	auto none = [](bool) { return std::vector<device_report>{}; };
	auto s1 = control_server::open(dir.sock(), none);
	REQUIRE(s1);
	struct stat st;
	REQUIRE(stat(dir.sock().c_str(), &st) == 0);
	CHECK((st.st_mode & 0777) == 0600);

	auto s2 = control_server::open(dir.sock(), none);
	REQUIRE_FALSE(s2);
	CHECK(s2.error().error == EADDRINUSE);
	CHECK(s2.error().message == "another daemon is serving " + dir.sock());

	s1->reset();
	CHECK_FALSE(std::filesystem::exists(dir.sock()));

	std::string plain = (dir.path / "file").string();
	REQUIRE(close(open(plain.c_str(), O_CREAT | O_WRONLY, 0600)) == 0);
	auto s3 = control_server::open(plain, none);
	REQUIRE_FALSE(s3);
	CHECK(s3.error().error == EEXIST);
	CHECK(s3.error().message == plain + " is not a socket");
}

TEST_CASE("control client: no daemon is a clear error naming the socket")
{
	temp_dir dir;
	control_client client;
	auto connected = client.connect(dir.sock());
	REQUIRE_FALSE(connected);
	CHECK(connected.error().error == ENOENT);
	CHECK(connected.error().what() == "cannot connect to " + dir.sock() +
						 ": No such file or directory — is tcmud running?");
}
