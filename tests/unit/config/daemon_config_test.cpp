// SPDX-License-Identifier: GPL-2.0-or-later
// tcmud.conf and tcmu-runner's tcmu.conf: keys, values, comments, the
// "file:line: what" messages, precedence, and sd_notify's datagram.
#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "config/daemon_config.h"
#include "config/sd_notify.h"

using namespace tcmud;

namespace {

struct parsed {
	daemon_config config;
	std::vector<std::string> errors;
	bool ok = false;
};

parsed tcmud_conf(std::string_view text)
{
	parsed p;
	p.ok = parse_tcmud_conf(text, "tcmud.conf", &p.config, &p.errors);
	return p;
}

parsed tcmu_conf(std::string_view text)
{
	parsed p;
	p.ok = parse_tcmu_conf(text, "tcmu.conf", &p.config, &p.errors);
	return p;
}

struct temp_dir {
	std::string path;
	temp_dir()
	{
		char tmpl[] = "/tmp/tcmud-config-test-XXXXXX";
		REQUIRE(mkdtemp(tmpl));
		path = tmpl;
	}
	~temp_dir() { REQUIRE(std::system(("rm -rf " + path).c_str()) == 0); }
	std::string write(const std::string &name, const std::string &text) const
	{
		std::string p = path + "/" + name;
		std::ofstream(p) << text;
		return p;
	}
};

} // namespace

TEST_CASE("tcmud.conf: every documented key is parsed", "[config]")
{
	parsed p = tcmud_conf("# tcmud\n"
			      "log_level = debug\n"
			      "log_dir = /var/log/tcmud\n"
			      "max_in_flight = 128\n"
			      "uring_entries=512\n"
			      "  dbus = false  \n");
	CHECK(p.ok);
	CHECK(p.errors.empty());
	CHECK(p.config.level == log_level::debug);
	CHECK(p.config.log_dir == "/var/log/tcmud");
	CHECK(p.config.max_in_flight == 128u);
	CHECK(p.config.uring_entries == 512u);
	CHECK(p.config.dbus == false);
}

TEST_CASE("tcmud.conf: fixed_buffers is true or false, and unset by default", "[config]")
{
	CHECK_FALSE(tcmud_conf("dbus = true\n").config.fixed_buffers);
	CHECK(tcmud_conf("fixed_buffers = false\n").config.fixed_buffers == false);
	CHECK(tcmud_conf("fixed_buffers = true\n").config.fixed_buffers == true);
	parsed bad = tcmud_conf("fixed_buffers = off\n");
	CHECK_FALSE(bad.ok);
	REQUIRE(bad.errors.size() == 1);
	CHECK(bad.errors[0] == "tcmud.conf:1: fixed_buffers: \"off\" is neither true nor false");

	daemon_config base = tcmud_conf("fixed_buffers = false\n").config;
	base.merge_from(tcmud_conf("dbus = true\n").config);
	CHECK(base.fixed_buffers == false);
	base.merge_from(tcmud_conf("fixed_buffers = true\n").config);
	CHECK(base.fixed_buffers == true);
}

TEST_CASE("tcmud.conf: an empty file sets nothing", "[config]")
{
	parsed p = tcmud_conf("\n# nothing\n\n");
	CHECK(p.ok);
	CHECK_FALSE(p.config.level);
	CHECK_FALSE(p.config.log_dir);
	CHECK_FALSE(p.config.max_in_flight);
	CHECK_FALSE(p.config.uring_entries);
	CHECK_FALSE(p.config.dbus);
}

TEST_CASE("tcmud.conf: quoted values and trailing comments", "[config]")
{
	parsed p = tcmud_conf("log_dir = \"/var/log/my dir\"  # with a space\n"
			      "max_in_flight = 64 # slots\n"
			      "dbus = true\t# targetcli\n");
	CHECK(p.ok);
	CHECK(p.config.log_dir == "/var/log/my dir");
	CHECK(p.config.max_in_flight == 64u);
	CHECK(p.config.dbus == true);
}

TEST_CASE("tcmud.conf: each bad line is reported as file:line: what", "[config]")
{
	parsed p = tcmud_conf("log_level = loud\n"
			      "max_in_flight = 0\n"
			      "uring_entries = 4\n"
			      "dbus = maybe\n"
			      "log_dir = var/log\n"
			      "colour = blue\n"
			      "just some words\n"
			      "log_level =\n");
	CHECK_FALSE(p.ok);
	REQUIRE(p.errors.size() == 8);
	CHECK(p.errors[0] == "tcmud.conf:1: log_level: \"loud\" is not one of error, warn, info, debug");
	CHECK(p.errors[1] == "tcmud.conf:2: max_in_flight: \"0\" is not a number from 1 to 65535 (cmd_id is 16 bits)");
	CHECK(p.errors[2] == "tcmud.conf:3: uring_entries: \"4\" is not a number from 8 to 32768");
	CHECK(p.errors[3] == "tcmud.conf:4: dbus: \"maybe\" is neither true nor false");
	CHECK(p.errors[4] == "tcmud.conf:5: log_dir: \"var/log\" is not an absolute path");
	CHECK(p.errors[5] == "tcmud.conf:6: unknown key \"colour\"");
	CHECK(p.errors[6] == "tcmud.conf:7: expected \"key = value\", found \"just some words\"");
	CHECK(p.errors[7] == "tcmud.conf:8: log_level has no value");
}

TEST_CASE("tcmud.conf: a key given twice is an error naming the first line", "[config]")
{
	parsed p = tcmud_conf("log_level = info\n\nlog_level = debug\n");
	CHECK_FALSE(p.ok);
	REQUIRE(p.errors.size() == 1);
	CHECK(p.errors[0] == "tcmud.conf:3: log_level is given twice (first on line 1)");
	CHECK(p.config.level == log_level::info);
}

TEST_CASE("tcmud.conf: numbers with signs, spaces or overflow are refused", "[config]")
{
	CHECK_FALSE(tcmud_conf("max_in_flight = -1\n").ok);
	CHECK_FALSE(tcmud_conf("max_in_flight = 1 2\n").ok);
	CHECK_FALSE(tcmud_conf("max_in_flight = 99999999999999999999\n").ok);
	CHECK_FALSE(tcmud_conf("max_in_flight = 0x10\n").ok);
	// cmd_id is 16 bits and one value marks "no slot": 65535 at most
	// (issue 14 F7: 65536 was accepted and the slots clamped silently).
	CHECK(tcmud_conf("max_in_flight = 65535\n").ok);
	CHECK_FALSE(tcmud_conf("max_in_flight = 65536\n").ok);
	CHECK_FALSE(tcmud_conf("max_in_flight = 65537\n").ok);
	CHECK_FALSE(tcmud_conf("log_dir = \"/unterminated\n").ok);
}

TEST_CASE("tcmu.conf: tcmu-runner's numeric log levels map onto ours", "[config]")
{
	const log_level expected[] = {log_level::error, log_level::error, log_level::warn,
				      log_level::info,  log_level::debug, log_level::debug};
	for (int n = 0; n <= 5; n++) {
		parsed p = tcmu_conf("log_level = " + std::to_string(n) + "\n");
		CHECK(p.ok);
		CHECK(p.config.level == expected[n]);
	}
	// Above 5 is clamped, as tcmu-runner does (log_level = 7 is common).
	for (const char *level : {"6", "7", "99"}) {
		parsed p = tcmu_conf(std::string("log_level = ") + level + "\n");
		CHECK(p.ok);
		CHECK(p.config.level == log_level::debug);
	}
	parsed bad = tcmu_conf("log_level = -1\n");
	CHECK_FALSE(bad.ok);
	REQUIRE(bad.errors.size() == 1);
	CHECK(bad.errors[0] ==
	      "tcmu.conf:1: log_level: \"-1\" is not a tcmu-runner level (a number, 0 to 5)");
}

TEST_CASE("tcmu.conf: quoted log_dir is honoured, tcmu-runner's other keys ignored", "[config]")
{
	parsed p = tcmu_conf("# Master TCMU configuration file\n"
			     "log_dir = \"/var/log/tcmu\"\n"
			     "max_data_area_mb = 1024\n");
	CHECK(p.ok);
	CHECK(p.config.log_dir == "/var/log/tcmu");
	CHECK_FALSE(p.config.max_in_flight);
}

TEST_CASE("load_daemon_config: tcmud.conf overrides tcmu.conf, missing files are fine",
	  "[config]")
{
	temp_dir dir;
	config_paths paths;
	paths.tcmu_conf = dir.write("tcmu.conf", "log_level = 4\nlog_dir = \"/var/log/old\"\n");
	paths.tcmud_conf = dir.write("tcmud.conf", "log_level = warn\n");
	daemon_config cfg;
	std::vector<std::string> errors;
	CHECK(load_daemon_config(paths, &cfg, &errors));
	CHECK(errors.empty());
	CHECK(cfg.level == log_level::warn);
	CHECK(cfg.log_dir == "/var/log/old");

	paths.tcmu_conf = dir.path + "/absent.conf";
	paths.tcmud_conf = dir.path + "/absent-too.conf";
	daemon_config none;
	CHECK(load_daemon_config(paths, &none, &errors));
	CHECK(errors.empty());
	CHECK_FALSE(none.level);
}

TEST_CASE("load_daemon_config: a required tcmud.conf that is missing is an error", "[config]")
{
	temp_dir dir;
	config_paths paths;
	paths.tcmu_conf = "";
	paths.tcmud_conf = dir.path + "/missing.conf";
	paths.tcmud_conf_required = true;
	daemon_config cfg;
	std::vector<std::string> errors;
	CHECK_FALSE(load_daemon_config(paths, &cfg, &errors));
	REQUIRE(errors.size() == 1);
	CHECK(errors[0] == paths.tcmud_conf + ": No such file or directory");
}

TEST_CASE("load_daemon_config: errors carry the file's path and line", "[config]")
{
	temp_dir dir;
	config_paths paths;
	paths.tcmu_conf = "";
	paths.tcmud_conf = dir.write("tcmud.conf", "\nuring_entries = lots\n");
	daemon_config cfg;
	std::vector<std::string> errors;
	CHECK_FALSE(load_daemon_config(paths, &cfg, &errors));
	REQUIRE(errors.size() == 1);
	CHECK(errors[0] == paths.tcmud_conf + ":2: uring_entries: \"lots\" is not a number from 8 to 32768");
}

TEST_CASE("merge_from: only the fields set in the override replace ours", "[config]")
{
	daemon_config base;
	base.level = log_level::debug;
	base.max_in_flight = 32;
	daemon_config command_line;
	command_line.max_in_flight = 512;
	base.merge_from(command_line);
	CHECK(base.level == log_level::debug);
	CHECK(base.max_in_flight == 512u);
}

TEST_CASE("sd_notify_state: nothing to do without NOTIFY_SOCKET", "[config][sd_notify]")
{
	unsetenv("NOTIFY_SOCKET");
	CHECK(sd_notify_state("READY=1") == 0);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	CHECK(sd_notify_state("READY=1") == -EINVAL);
	unsetenv("NOTIFY_SOCKET");
}

TEST_CASE("sd_notify_state: sends the state as one datagram to the socket", "[config][sd_notify]")
{
	temp_dir dir;
	for (bool abstract : {false, true}) {
		std::string name = abstract ? "@tcmud-notify-test-" + std::to_string(getpid())
					    : dir.path + "/notify";
		int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		REQUIRE(fd >= 0);
		sockaddr_un addr{};
		addr.sun_family = AF_UNIX;
		std::copy(name.begin(), name.end(), addr.sun_path);
		if (abstract)
			addr.sun_path[0] = '\0';
		socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + name.size());
		REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0);
		setenv("NOTIFY_SOCKET", name.c_str(), 1);
		CHECK(sd_notify_state("READY=1\nSTATUS=serving 0 devices") == 0);
		char buf[128] = {};
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		CHECK(std::string(buf, n > 0 ? size_t(n) : 0) == "READY=1\nSTATUS=serving 0 devices");
		close(fd);
	}
	unsetenv("NOTIFY_SOCKET");
}

TEST_CASE("control_socket takes none or an absolute path that fits a sockaddr_un", "[config]")
{
	parsed p = tcmud_conf("control_socket = /run/x/tcmud.sock\n");
	REQUIRE(p.ok);
	CHECK(*p.config.control_socket == "/run/x/tcmud.sock");
	CHECK(tcmud_conf("control_socket = none\n").ok);

	parsed relative = tcmud_conf("control_socket = run/tcmud.sock\n");
	CHECK_FALSE(relative.ok);
	REQUIRE(relative.errors.size() == 1);
	CHECK(relative.errors[0].find("tcmud.conf:1: control_socket:") != std::string::npos);

	// The same rule serves --control-socket.
	CHECK(check_control_socket("/" + std::string(106, 'a')));
	CHECK_FALSE(check_control_socket("/" + std::string(107, 'a')));
	CHECK_FALSE(check_control_socket(""));
}

TEST_CASE("tcmud.conf: max_transfer_kb, 4 to 1048576 KiB", "[config]")
{
	parsed p = tcmud_conf("max_transfer_kb = 1024\n");
	CHECK(p.ok);
	CHECK(p.config.max_transfer_kb == 1024u);
	CHECK(tcmud_conf("max_transfer_kb = 4\n").ok);
	CHECK(tcmud_conf("max_transfer_kb = 1048576\n").ok);
	CHECK_FALSE(tcmud_conf("max_transfer_kb = 3\n").ok);
	CHECK_FALSE(tcmud_conf("max_transfer_kb = 1048577\n").ok);
	CHECK_FALSE(tcmud_conf("max_transfer_kb = 1M\n").ok);
	parsed bad = tcmud_conf("max_transfer_kb = 0\n");
	REQUIRE(bad.errors.size() == 1);
	CHECK(bad.errors[0] == "tcmud.conf:1: max_transfer_kb: \"0\" is not a number from 4 to 1048576");
	daemon_config base, over;
	base.max_transfer_kb = 64;
	over.max_transfer_kb = 2048;
	base.merge_from(over);
	CHECK(base.max_transfer_kb == 2048u);
}

// Found by tests/fuzz (config): a NUL inside a value was kept, so the
// daemon bound or opened the path cut at the NUL, not the one it reported.
TEST_CASE("tcmud.conf: a line with a NUL byte is an error, not a shorter path", "[config]")
{
	using namespace std::string_literals;
	parsed sock = tcmud_conf("control_socket = /run/a\0/b.sock\n"s);
	CHECK_FALSE(sock.ok);
	CHECK_FALSE(sock.config.control_socket);
	REQUIRE(sock.errors.size() == 1);
	CHECK(sock.errors[0].find("tcmud.conf:1:") == 0);
	CHECK(sock.errors[0].find("NUL") != std::string::npos);

	parsed dir = tcmud_conf("log_level = info\nlog_dir = \"/var/log\0x\"\n"s);
	CHECK_FALSE(dir.ok);
	CHECK_FALSE(dir.config.log_dir);
	CHECK(*dir.config.level == log_level::info); // the good line still counts

	CHECK_FALSE(tcmu_conf("log_dir = /var/log\0x\n"s).ok);
	CHECK_FALSE(check_control_socket("/run/a\0b"s));
}
