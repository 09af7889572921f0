// SPDX-License-Identifier: GPL-2.0-or-later
// queue_cpus (tcmud.conf) / --queue-cpus: parsing, the messages for bad
// values, and which CPU each queue's worker gets.
#include <catch2/catch.hpp>

#include "config/daemon_config.h"
#include "config/queue_placement.h"

using namespace tcmud;
using mode = queue_placement::mode;

namespace {

queue_placement parse_ok(std::string_view text)
{
	INFO(text);
	auto p = parse_queue_placement(text);
	REQUIRE(p);
	return *p;
}

std::string conf_error(std::string_view text)
{
	daemon_config c;
	std::vector<std::string> errors;
	CHECK_FALSE(parse_tcmud_conf(text, "tcmud.conf", &c, &errors));
	CHECK_FALSE(c.queue_cpus);
	return errors.size() == 1 ? errors[0] : "";
}

} // namespace

TEST_CASE("queue_cpus: auto, none and CPU lists with ranges", "[config]")
{
	CHECK(parse_ok("auto").how == mode::automatic);
	CHECK(parse_ok("none").how == mode::none);
	queue_placement l = parse_ok("0-3,8");
	CHECK(l.how == mode::list);
	CHECK(l.cpus == std::vector<int>{0, 1, 2, 3, 8});
	CHECK(parse_ok("5,1").cpus == std::vector<int>{5, 1}); // order kept
	CHECK(parse_ok("1023").cpus == std::vector<int>{1023});
	CHECK(to_string(l) == "0-3,8");
	CHECK(to_string(parse_ok("5,1,2")) == "5,1-2");
	CHECK(to_string(parse_ok("auto")) == "auto");
	CHECK(to_string(parse_ok("none")) == "none");
}

TEST_CASE("queue_cpus in tcmud.conf is set, and the command line wins", "[config]")
{
	daemon_config file;
	std::vector<std::string> errors;
	REQUIRE(parse_tcmud_conf("queue_cpus = 2,0  # the NUMA node's CPUs\n", "tcmud.conf",
				 &file, &errors));
	REQUIRE(file.queue_cpus);
	CHECK(file.queue_cpus->cpus == std::vector<int>{2, 0});
	daemon_config cli;
	cli.queue_cpus = queue_placement{mode::none, {}};
	file.merge_from(cli);
	CHECK(file.queue_cpus->how == mode::none);
}

TEST_CASE("queue_cpus: each bad value is refused with what is wrong", "[config]")
{
	const std::string want = " (want auto, none or a list like 0-3,8)";
	CHECK(conf_error("queue_cpus = 3-1\n") ==
	      "tcmud.conf:1: queue_cpus: \"3-1\": the range \"3-1\" runs backwards" + want);
	CHECK(conf_error("queue_cpus = 0,2,1-2\n") ==
	      "tcmud.conf:1: queue_cpus: \"0,2,1-2\": CPU 2 is listed twice" + want);
	CHECK(conf_error("queue_cpus = all\n") ==
	      "tcmud.conf:1: queue_cpus: \"all\": \"all\" is not a CPU number from 0 to 1023 "
	      "or a range N-M of them" + want);
	CHECK(conf_error("queue_cpus = 1024\n") ==
	      "tcmud.conf:1: queue_cpus: \"1024\": \"1024\" is not a CPU number from 0 to 1023 "
	      "or a range N-M of them" + want);
	CHECK(conf_error("queue_cpus = 0,\n") ==
	      "tcmud.conf:1: queue_cpus: \"0,\": \"\" is not a CPU number from 0 to 1023 "
	      "or a range N-M of them" + want);
	CHECK(conf_error("queue_cpus =\n") == "tcmud.conf:1: queue_cpus has no value");
	for (const char *bad : {"-1", "1-", "-", "1--2", "1 2", "0x1", "Auto", "1,,2"}) {
		INFO(bad);
		CHECK_FALSE(parse_queue_placement(bad));
	}
}

TEST_CASE("queue_cpus auto: worker q on CPU q % online CPUs, a single queue unpinned", "[config]")
{
	const queue_placement a = parse_ok("auto");
	// Four queues, four CPUs: the kernel sends CPU c's commands to queue
	// c % 4, so worker q sits with its submitters.
	for (unsigned q = 0; q < 4; ++q)
		CHECK(queue_cpu(a, q, 4, 4) == int(q));
	// More queues than CPUs: wrap (those queues get no commands anyway).
	CHECK(queue_cpu(a, 2, 4, 2) == 0);
	CHECK(queue_cpu(a, 3, 4, 2) == 1);
	CHECK(queue_cpu(a, 0, 1, 8) == -1);
}

TEST_CASE("queue_cpus none leaves every worker unpinned; a list is used round robin",
	  "[config]")
{
	for (unsigned q = 0; q < 4; ++q)
		CHECK(queue_cpu(parse_ok("none"), q, 4, 4) == -1);
	const queue_placement l = parse_ok("6,2");
	CHECK(queue_cpu(l, 0, 4, 8) == 6);
	CHECK(queue_cpu(l, 1, 4, 8) == 2);
	CHECK(queue_cpu(l, 2, 4, 8) == 6);
	CHECK(queue_cpu(l, 0, 1, 8) == 6); // named CPUs pin a single queue too
}
