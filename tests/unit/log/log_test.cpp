// SPDX-License-Identifier: GPL-2.0-or-later
// The daemon logger: level filtering, the device prefix and the sink hook.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <string>
#include <vector>

#include "log/log.h"

using namespace tcmud;

namespace {

struct captured_line {
	log_level level;
	std::string text;
};

void capture(void *ctx, log_level level, std::string_view line)
{
	static_cast<std::vector<captured_line> *>(ctx)->push_back(
		{level, std::string(line)});
}

// Installs the capturing sink for one test and restores stderr after it.
struct capture_scope {
	std::vector<captured_line> lines;
	log_level saved = get_log_level();
	capture_scope() { set_log_sink(capture, &lines); }
	~capture_scope()
	{
		set_log_sink(nullptr, nullptr);
		set_log_level(saved);
	}
};

} // namespace

TEST_CASE("a log line carries the device prefix before the message", "[log]")
{
	capture_scope cap;
	log_error("file/lun0:", "cannot open %s", "/img");
	REQUIRE(cap.lines.size() == 1);
	CHECK(cap.lines[0].text == "file/lun0: cannot open /img");
	CHECK(cap.lines[0].level == log_level::error);
}

TEST_CASE("lines below the current level are dropped", "[log]")
{
	capture_scope cap;
	set_log_level(log_level::warn);
	log_info("", "not shown");
	log_debug("", "not shown");
	log_warn("", "shown");
	REQUIRE(cap.lines.size() == 1);
	CHECK(cap.lines[0].text == "shown");
	CHECK_FALSE(log_enabled(log_level::info));
	CHECK(log_enabled(log_level::error));
}

TEST_CASE("an overlong message is cut, not overflowed", "[log]")
{
	capture_scope cap;
	std::string huge(5000, 'x');
	log_error("p:", "%s", huge.c_str());
	REQUIRE(cap.lines.size() == 1);
	CHECK(cap.lines[0].text.size() < 1100);
	CHECK(cap.lines[0].text.rfind("p: xxx", 0) == 0);
}

TEST_CASE("level names parse back to their level", "[log]")
{
	CHECK(parse_log_level("debug") == log_level::debug);
	CHECK(parse_log_level("error") == log_level::error);
	CHECK_FALSE(parse_log_level("loud"));
}

TEST_CASE("format_line gives every text sink the same words, cut to fit", "[log]")
{
	char buf[64];
	size_t n = format_line(buf, log_level::warn, "file/disk0: queue 0: stopped");
	CHECK(std::string(buf, n) == "tcmud warn: file/disk0: queue 0: stopped\n");
	char small[16];
	n = format_line(small, log_level::info, "a line much longer than the buffer");
	CHECK(n == sizeof(small) - 1);
	CHECK(std::string(small, n) == "tcmud info: a \n");
}

namespace {

// Points stderr at a pipe for one test; read() returns what was written.
struct stderr_pipe {
	int fds[2] = {-1, -1};
	int saved = dup(STDERR_FILENO);
	stderr_pipe()
	{
		REQUIRE(pipe(fds) == 0);
		REQUIRE(dup2(fds[1], STDERR_FILENO) == STDERR_FILENO);
	}
	~stderr_pipe()
	{
		dup2(saved, STDERR_FILENO);
		close(saved);
		close(fds[0]);
		close(fds[1]);
		unsetenv("JOURNAL_STREAM");
	}
	// JOURNAL_STREAM as systemd sets it: "<st_dev>:<st_ino>" of stderr.
	void as_journal_stream()
	{
		struct stat st{};
		REQUIRE(fstat(fds[1], &st) == 0);
		std::string v = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
		setenv("JOURNAL_STREAM", v.c_str(), 1);
	}
	std::string read_all()
	{
		char buf[4096];
		ssize_t n = ::read(fds[0], buf, sizeof(buf));
		return n > 0 ? std::string(buf, size_t(n)) : std::string();
	}
};

} // namespace

TEST_CASE("stderr lines carry the journal's priority prefix only when stderr is the journal",
	  "[log]")
{
	stderr_pipe p;
	log_level saved = get_log_level();
	set_log_level(log_level::debug);
	log_error("file/disk0:", "backing file gone");
	log_info("", "started");
	CHECK(p.read_all() == "tcmud error: file/disk0: backing file gone\ntcmud info: started\n");

	p.as_journal_stream();
	log_error("file/disk0:", "backing file gone");
	CHECK(p.read_all() == "<3>tcmud error: file/disk0: backing file gone\n");
	log_warn("", "w");
	log_info("", "i");
	log_debug("", "d");
	CHECK(p.read_all() == "<4>tcmud warn: w\n<6>tcmud info: i\n<7>tcmud debug: d\n");

	// Another stream than stderr's (a child's inherited variable): no prefix.
	setenv("JOURNAL_STREAM", "1:1", 1);
	log_error("", "e");
	CHECK(p.read_all() == "tcmud error: e\n");
	set_log_level(saved);
}
