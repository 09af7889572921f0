// SPDX-License-Identifier: GPL-2.0-or-later
// The configuration parsers: tcmud.conf, tcmu-runner's tcmu.conf, the
// queue_cpus list, the control_socket rule and the file handler's
// cfgstring. The first byte picks the parser; the rest is the text.
//
// Oracles: success exactly when no error was reported; every error names
// the file and a line that exists; parsing is deterministic; what a parser
// accepted, written back in the syntax it documents, parses to the same
// value (tcmud.conf, queue_cpus, cfgstring); every accepted value is inside
// its documented range (max_in_flight 1..65536, uring_entries 8..32768,
// max_transfer_kb 4..1048576, absolute log_dir, CPU numbers 0..1023
// without repeats, absolute backing path without ';', socket path "none"
// or absolute and at most 107 bytes).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/daemon_config.h"
#include "config/queue_placement.h"
#include "file/file_config.h"
#include "fuzz_support.h"

using namespace tcmud;
using tcmud::fuzz::input;

namespace {

bool same(const daemon_config &a, const daemon_config &b)
{
	return a.level == b.level && a.log_dir == b.log_dir && a.control_socket == b.control_socket &&
	       a.max_in_flight == b.max_in_flight && a.uring_entries == b.uring_entries &&
	       a.dbus == b.dbus && a.queue_cpus == b.queue_cpus &&
	       a.max_transfer_kb == b.max_transfer_kb && a.copy_groups == b.copy_groups;
}

const char *level_name(log_level l)
{
	switch (l) {
	case log_level::error: return "error";
	case log_level::warn: return "warn";
	case log_level::info: return "info";
	case log_level::debug: return "debug";
	}
	return "?";
}

bool quotable(const std::string &v)
{
	return v.find('"') == std::string::npos && v.find('\n') == std::string::npos;
}

void check_errors(const std::vector<std::string> &errors, std::string_view text, bool ok)
{
	FUZZ_CHECK(ok == errors.empty(), "the result disagrees with the error list");
	size_t lines = 1 + size_t(std::count(text.begin(), text.end(), '\n'));
	for (const auto &e : errors) {
		FUZZ_CHECK(e.rfind("f.conf:", 0) == 0, "an error without the file name: " + e);
		size_t n = std::strtoul(e.c_str() + 7, nullptr, 10);
		FUZZ_CHECK(n >= 1 && n <= lines, "an error on a line that does not exist: " + e);
	}
}

void check_ranges(const daemon_config &c)
{
	if (c.max_in_flight)
		FUZZ_CHECK(*c.max_in_flight >= 1 && *c.max_in_flight <= 65536, "max_in_flight out of range");
	if (c.uring_entries)
		FUZZ_CHECK(*c.uring_entries >= 8 && *c.uring_entries <= 32768, "uring_entries out of range");
	if (c.max_transfer_kb)
		FUZZ_CHECK(*c.max_transfer_kb >= 4 && *c.max_transfer_kb <= 1048576,
			   "max_transfer_kb out of range");
	if (c.log_dir)
		FUZZ_CHECK(!c.log_dir->empty() && (*c.log_dir)[0] == '/', "log_dir not absolute");
	if (c.control_socket)
		FUZZ_CHECK(check_control_socket(*c.control_socket).ok(),
			   "control_socket accepted against its own rule");
}

void tcmud_conf(std::string_view text)
{
	daemon_config a, b;
	std::vector<std::string> ea, eb;
	bool ok = parse_tcmud_conf(text, "f.conf", &a, &ea);
	check_errors(ea, text, ok);
	bool ok2 = parse_tcmud_conf(text, "f.conf", &b, &eb);
	FUZZ_CHECK(ok == ok2 && ea == eb && same(a, b), "parsing the same text twice differs");
	check_ranges(a);

	// Write back what was accepted and read it again.
	std::string out;
	if (a.level)
		out += std::string("log_level = ") + level_name(*a.level) + "\n";
	if (a.log_dir && quotable(*a.log_dir))
		out += "log_dir = \"" + *a.log_dir + "\"\n";
	if (a.control_socket && quotable(*a.control_socket))
		out += "control_socket = \"" + *a.control_socket + "\"\n";
	if (a.max_in_flight)
		out += "max_in_flight = " + std::to_string(*a.max_in_flight) + "\n";
	if (a.uring_entries)
		out += "uring_entries = " + std::to_string(*a.uring_entries) + "\n";
	if (a.max_transfer_kb)
		out += "max_transfer_kb = " + std::to_string(*a.max_transfer_kb) + "\n";
	if (a.dbus)
		out += std::string("dbus = ") + (*a.dbus ? "true" : "false") + "\n";
	if (a.queue_cpus)
		out += "queue_cpus = " + to_string(*a.queue_cpus) + "\n";
	if (a.copy_groups)
		out += "copy_groups = \"" + to_string(*a.copy_groups) + "\"\n";
	daemon_config c;
	std::vector<std::string> ec;
	FUZZ_CHECK(parse_tcmud_conf(out, "f.conf", &c, &ec),
		   "accepted values do not parse when written back: " + (ec.empty() ? "" : ec[0]));
	if (a.log_dir && !quotable(*a.log_dir))
		c.log_dir = a.log_dir;
	if (a.control_socket && !quotable(*a.control_socket))
		c.control_socket = a.control_socket;
	FUZZ_CHECK(same(a, c), "accepted values read back differently");
}

void tcmu_conf(std::string_view text)
{
	daemon_config a;
	std::vector<std::string> ea;
	bool ok = parse_tcmu_conf(text, "f.conf", &a, &ea);
	check_errors(ea, text, ok);
	FUZZ_CHECK(!a.max_in_flight && !a.uring_entries && !a.dbus && !a.queue_cpus &&
			   !a.control_socket && !a.max_transfer_kb,
		   "tcmu.conf set a key that belongs to tcmud.conf only");
	check_ranges(a);
}

void placement(std::string_view text)
{
	auto parsed = parse_queue_placement(text);
	if (!parsed)
		return;
	const queue_placement &p = *parsed;
	if (p.how == queue_placement::mode::list) {
		FUZZ_CHECK(!p.cpus.empty(), "an empty CPU list accepted");
		std::vector<int> sorted = p.cpus;
		std::sort(sorted.begin(), sorted.end());
		FUZZ_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
			   "a CPU listed twice");
		FUZZ_CHECK(sorted.front() >= 0 && sorted.back() <= max_cpu_number, "a CPU out of range");
		for (unsigned q = 0; q < 8; q++) {
			int cpu = queue_cpu(p, q, 8, 4);
			FUZZ_CHECK(cpu == -1 || std::find(p.cpus.begin(), p.cpus.end(), cpu) != p.cpus.end(),
				   "a queue placed on a CPU not in the list");
		}
	}
	std::string text2 = to_string(p);
	auto back = parse_queue_placement(text2);
	FUZZ_CHECK(back && *back == p,
		   "queue_cpus does not read back from to_string: " + text2);
}

void cfgstring(std::string_view text)
{
	auto parsed = parse_file_config(text);
	if (!parsed)
		return;
	const file_config &c = *parsed;
	FUZZ_CHECK(!c.path.empty() && c.path[0] == '/', "a relative backing path accepted");
	FUZZ_CHECK(c.path.find(';') == std::string::npos, "a ';' in the accepted path");
	FUZZ_CHECK(!(c.extend && c.block), "extend accepted with block");
	std::string again = c.path + ";direct=" + (c.direct ? "1" : "0") + ";extend=" +
			    (c.extend ? "1" : "0") + ";block=" + (c.block ? "1" : "0");
	auto d = parse_file_config(again);
	FUZZ_CHECK(d && d->path == c.path && d->direct == c.direct && d->extend == c.extend &&
			   d->block == c.block,
		   "a cfgstring does not read back");
}

void socket_rule(std::string_view text)
{
	if (check_control_socket(text))
		FUZZ_CHECK(text == "none" || (!text.empty() && text[0] == '/' && text.size() <= 107 &&
					      text.find('\0') == std::string_view::npos),
			   "a control socket path accepted against the rule");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input in(data, size);
	uint8_t which = in.u8();
	auto rest = in.rest();
	std::string_view text(reinterpret_cast<const char *>(rest.data()), rest.size());
	switch (which % 5) {
	case 0: tcmud_conf(text); break;
	case 1: tcmu_conf(text); break;
	case 2: placement(text); break;
	case 3: cfgstring(text); break;
	case 4: socket_rule(text); break;
	}
	return 0;
}
