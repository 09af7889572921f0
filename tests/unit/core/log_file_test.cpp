// SPDX-License-Identifier: GPL-2.0-or-later
// The log file sink: the file and stderr carry the same "tcmud LEVEL: " words
// (scripts and the systemd tests grep stderr/the journal for them), the file
// with a UTC time stamp in front.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "core/log_file.h"
#include "log/log.h"

using namespace tcmud;

namespace {

std::string slurp(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

// Sends fd 2 to `path` for the scope's life.
struct stderr_to_file {
	int saved = ::dup(STDERR_FILENO);
	explicit stderr_to_file(const std::string &path)
	{
		int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		REQUIRE(fd >= 0);
		::dup2(fd, STDERR_FILENO);
		::close(fd);
	}
	~stderr_to_file()
	{
		::dup2(saved, STDERR_FILENO);
		::close(saved);
	}
};

} // namespace

TEST_CASE("the log file and stderr carry the level, the file a time stamp", "[log]")
{
	char tmpl[] = "/tmp/tcmud-log-XXXXXX";
	REQUIRE(::mkdtemp(tmpl) != nullptr);
	std::string dir = tmpl;
	// Other cases in this program quieten the logger.
	log_level saved = get_log_level();
	set_log_level(log_level::info);
	{
		stderr_to_file redirect(dir + "/stderr");
		REQUIRE(set_log_dir(dir));
		log_info("file/disk0:", "queue 0: drained");
		log_warn("", "stopped");
		REQUIRE(set_log_dir(""));
	}
	set_log_level(saved);
	CHECK(slurp(dir + "/stderr") ==
	      "tcmud info: file/disk0: queue 0: drained\ntcmud warn: stopped\n");
	std::string file = slurp(dir + "/tcmud.log");
	std::regex line(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z tcmud (info|warn): .*)");
	std::istringstream lines(file);
	std::string l;
	int n = 0;
	while (std::getline(lines, l)) {
		CHECK(std::regex_match(l, line));
		n++;
	}
	CHECK(n == 2);
	CHECK(file.find("tcmud info: file/disk0: queue 0: drained\n") != std::string::npos);
	std::remove((dir + "/stderr").c_str());
	std::remove((dir + "/tcmud.log").c_str());
	::rmdir(dir.c_str());
}

TEST_CASE("a log directory that cannot be opened is refused with its path", "[log]")
{
	auto opened = set_log_dir("/nonexistent/tcmud-test");
	REQUIRE_FALSE(opened);
	CHECK(opened.error().message.find("/nonexistent/tcmud-test/tcmud.log") != std::string::npos);
}
