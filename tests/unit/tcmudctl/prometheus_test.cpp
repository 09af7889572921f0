// SPDX-License-Identifier: GPL-2.0-or-later
// tcmudctl metrics: the Prometheus text exposition of a control-socket
// snapshot, read back by a strict parser of the format (version 0.0.4:
// HELP/TYPE before a family's samples, families contiguous, names and label
// escapes as specified, no duplicate series, histogram buckets sorted by
// le, cumulative, ending at +Inf equal to _count), and by promtool when the
// machine has Debian's prometheus package.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "prometheus.h"
#include "stats/latency_histogram.h"

using namespace tcmud;

namespace {

struct series {
	std::string name;
	std::map<std::string, std::string> labels;
	double value = 0;
};

struct exposition {
	std::map<std::string, std::string> types; // family -> type
	std::vector<series> samples;
};

// Throws (Catch reports it) on the first violation of the format.
struct strict_parser {
	exposition out;
	std::set<std::string> closed;   // families whose samples are behind us
	std::string current;            // family of the last sample
	std::set<std::string> seen;     // series keys
	std::set<std::string> helped;

	static bool metric_name(const std::string &s)
	{
		static const std::regex re("[a-zA-Z_:][a-zA-Z0-9_:]*");
		return std::regex_match(s, re);
	}

	std::string family_of(const std::string &name) const
	{
		for (const char *suffix : {"_bucket", "_count", "_sum"}) {
			std::string sfx = suffix;
			if (name.size() > sfx.size() && name.ends_with(sfx)) {
				std::string base = name.substr(0, name.size() - sfx.size());
				auto t = out.types.find(base);
				if (t != out.types.end() && (t->second == "histogram" || t->second == "summary"))
					return base;
			}
		}
		return name;
	}

	void fail(size_t n, const std::string &line, const std::string &why)
	{
		throw std::runtime_error("line " + std::to_string(n) + ": " + why + ": " + line);
	}

	void comment(size_t n, const std::string &line)
	{
		std::istringstream in(line.substr(1));
		std::string word, name;
		in >> word >> name;
		if (word != "HELP" && word != "TYPE")
			return; // a plain comment
		if (!metric_name(name))
			fail(n, line, "bad metric name in " + word);
		if (word == "HELP") {
			if (!helped.insert(name).second)
				fail(n, line, "second HELP");
			return;
		}
		std::string type, extra;
		in >> type;
		if (in >> extra)
			fail(n, line, "text after the type");
		static const std::set<std::string> types = {"counter", "gauge", "histogram",
							    "summary", "untyped"};
		if (!types.count(type))
			fail(n, line, "unknown type");
		if (out.types.count(name))
			fail(n, line, "second TYPE");
		if (closed.count(name) || current == name)
			fail(n, line, "TYPE after the family's samples");
		out.types[name] = type;
	}

	void sample(size_t n, const std::string &line)
	{
		size_t i = 0;
		while (i < line.size() && line[i] != '{' && line[i] != ' ')
			++i;
		series s;
		s.name = line.substr(0, i);
		if (!metric_name(s.name))
			fail(n, line, "bad metric name");
		if (i < line.size() && line[i] == '{') {
			++i;
			while (i < line.size() && line[i] != '}') {
				size_t eq = line.find('=', i);
				if (eq == std::string::npos)
					fail(n, line, "label without '='");
				std::string lname = line.substr(i, eq - i);
				static const std::regex re("[a-zA-Z_][a-zA-Z0-9_]*");
				if (!std::regex_match(lname, re) || lname.starts_with("__"))
					fail(n, line, "bad label name '" + lname + "'");
				i = eq + 1;
				if (i >= line.size() || line[i] != '"')
					fail(n, line, "label value not quoted");
				std::string value;
				for (++i;; ++i) {
					if (i >= line.size())
						fail(n, line, "unterminated label value");
					if (line[i] == '"')
						break;
					if (line[i] == '\\') {
						++i;
						if (i >= line.size())
							fail(n, line, "escape at the end");
						if (line[i] == 'n')
							value += '\n';
						else if (line[i] == '\\' || line[i] == '"')
							value += line[i];
						else
							fail(n, line, "bad escape");
					} else {
						value += line[i];
					}
				}
				++i; // past the closing quote
				if (!s.labels.emplace(lname, value).second)
					fail(n, line, "label '" + lname + "' twice");
				if (i < line.size() && line[i] == ',')
					++i;
				else if (i >= line.size() || line[i] != '}')
					fail(n, line, "expected ',' or '}'");
			}
			if (i >= line.size())
				fail(n, line, "unterminated label set");
			++i;
		}
		if (i >= line.size() || line[i] != ' ')
			fail(n, line, "no space before the value");
		std::string rest = line.substr(i + 1);
		std::istringstream in(rest);
		std::string value, ts, extra;
		in >> value;
		if (in >> ts && in >> extra)
			fail(n, line, "text after the timestamp");
		if (value == "+Inf")
			s.value = INFINITY;
		else if (value == "-Inf")
			s.value = -INFINITY;
		else if (value == "NaN")
			s.value = NAN;
		else {
			char *end = nullptr;
			s.value = std::strtod(value.c_str(), &end);
			if (value.empty() || *end)
				fail(n, line, "bad value");
		}
		std::string fam = family_of(s.name);
		if (!out.types.count(fam))
			fail(n, line, "sample before its family's TYPE");
		if (fam != current) {
			if (closed.count(fam))
				fail(n, line, "family '" + fam + "' is split");
			if (!current.empty())
				closed.insert(current);
			current = fam;
		}
		std::string key = s.name;
		for (const auto &[k, v] : s.labels)
			key += "|" + k + "=" + v;
		if (!seen.insert(key).second)
			fail(n, line, "duplicate series");
		out.samples.push_back(std::move(s));
	}

	exposition parse(const std::string &text)
	{
		if (!text.empty() && text.back() != '\n')
			throw std::runtime_error("no newline at the end");
		std::istringstream in(text);
		std::string line;
		for (size_t n = 1; std::getline(in, line); ++n) {
			if (line.empty())
				continue;
			if (line[0] == '#')
				comment(n, line);
			else
				sample(n, line);
		}
		check_histograms();
		return out;
	}

	void check_histograms()
	{
		for (const auto &[fam, type] : out.types) {
			if (type != "histogram")
				continue;
			// Per series (labels without le): buckets in order.
			std::map<std::string, std::vector<std::pair<double, double>>> buckets;
			std::map<std::string, double> counts;
			for (const series &s : out.samples) {
				auto labels = s.labels;
				labels.erase("le");
				std::string key;
				for (const auto &[k, v] : labels)
					key += k + "=" + v + ",";
				if (s.name == fam + "_bucket") {
					auto le = s.labels.find("le");
					if (le == s.labels.end())
						throw std::runtime_error(fam + ": bucket without le");
					double bound = le->second == "+Inf" ? INFINITY : std::stod(le->second);
					buckets[key].emplace_back(bound, s.value);
				} else if (s.name == fam + "_count") {
					counts[key] = s.value;
				}
			}
			for (const auto &[key, b] : buckets) {
				for (size_t i = 1; i < b.size(); ++i) {
					if (!(b[i].first > b[i - 1].first))
						throw std::runtime_error(fam + "{" + key + "}: le not increasing");
					if (b[i].second < b[i - 1].second)
						throw std::runtime_error(fam + "{" + key + "}: not cumulative");
				}
				if (b.empty() || !std::isinf(b.back().first))
					throw std::runtime_error(fam + "{" + key + "}: no +Inf bucket");
				if (!counts.count(key) || counts[key] != b.back().second)
					throw std::runtime_error(fam + "{" + key + "}: _count is not the +Inf bucket");
			}
		}
	}
};

control::control_reply sample_reply()
{
	control::control_reply r;
	r.time_ns = 123;
	control::device_report a;
	a.name = "lun0";
	a.hba = "user_1";
	a.nr_queues = 2;
	a.queues.resize(2);
	a.queues[0].commands = 10;
	a.queues[0].bytes_read = 4096;
	a.queues[0].latency[stats::latency_bucket(500)] = 3;     // < 1 µs
	a.queues[0].latency[stats::latency_bucket(1500)] = 5;    // 1-2 µs
	a.queues[0].latency[stats::latency_bucket(3'000'000)] = 2;
	a.queues[0].latency_sum_ns = 3 * 500 + 5 * 1500 + 2 * 3'000'000;
	a.queues[0].sense_keys[5] = 4;
	a.queues[1].commands = 7;
	a.queues[1].depth = 3;
	a.queues[1].ring_resets = 1;
	a.queues[1].stale_results = 2;
	a.queues[1].fixed_buffers = 1;
	a.queues[1].latency[stats::latency_buckets - 1] = 7;      // past 68 s
	control::device_report b;
	b.name = "we\"ird\\name";
	b.hba = "user_2";
	b.nr_queues = 1;
	b.queues.resize(1);
	r.devices = {a, b};
	return r;
}

double value_of(const exposition &e, const std::string &name,
		const std::map<std::string, std::string> &labels)
{
	for (const series &s : e.samples) {
		if (s.name != name)
			continue;
		bool all = true;
		for (const auto &[k, v] : labels)
			all = all && s.labels.count(k) && s.labels.at(k) == v;
		if (all)
			return s.value;
	}
	throw std::runtime_error("no sample " + name);
}

} // namespace

TEST_CASE("metrics: the exposition passes a strict parse and says what the snapshot says")
{
	std::string text = ctl::prometheus_text(sample_reply());
	exposition e = strict_parser{}.parse(text);
	CHECK(e.types.at("tcmud_commands_total") == "counter");
	CHECK(e.types.at("tcmud_queue_depth") == "gauge");
	CHECK(e.types.at("tcmud_command_latency_seconds") == "histogram");
	CHECK(value_of(e, "tcmud_commands_total", {{"device", "lun0"}, {"queue", "1"}}) == 7);
	CHECK(value_of(e, "tcmud_read_bytes_total", {{"device", "lun0"}, {"queue", "0"}}) == 4096);
	CHECK(value_of(e, "tcmud_queue_depth", {{"device", "lun0"}, {"queue", "1"}}) == 3);
	CHECK(value_of(e, "tcmud_ring_resets_total", {{"device", "lun0"}, {"queue", "1"}}) == 1);
	CHECK(value_of(e, "tcmud_stale_results_total", {{"device", "lun0"}, {"queue", "1"}}) == 2);
	CHECK(e.types.at("tcmud_queue_fixed_buffers") == "gauge");
	CHECK(value_of(e, "tcmud_queue_fixed_buffers", {{"device", "lun0"}, {"queue", "0"}}) == 0);
	CHECK(value_of(e, "tcmud_queue_fixed_buffers", {{"device", "lun0"}, {"queue", "1"}}) == 1);
	CHECK(value_of(e, "tcmud_check_conditions_total",
		       {{"device", "lun0"}, {"queue", "0"}, {"sense_key", "0x5"}}) == 4);
	// The escaped name comes back as it was.
	CHECK(value_of(e, "tcmud_commands_total", {{"device", "we\"ird\\name"}}) == 0);
	// Cumulative buckets at each power of two: under 1.024 µs, 2.048 µs, ...
	CHECK(value_of(e, "tcmud_command_latency_seconds_bucket",
		       {{"device", "lun0"}, {"queue", "0"}, {"le", "0.000001023"}}) == 3);
	CHECK(value_of(e, "tcmud_command_latency_seconds_bucket",
		       {{"device", "lun0"}, {"queue", "0"}, {"le", "0.000002047"}}) == 8);
	CHECK(value_of(e, "tcmud_command_latency_seconds_bucket",
		       {{"device", "lun0"}, {"queue", "0"}, {"le", "0.004194303"}}) == 10);
	CHECK(value_of(e, "tcmud_command_latency_seconds_count", {{"device", "lun0"}, {"queue", "0"}}) == 10);
	// _sum: the daemon's exact sum, in seconds (mean = _sum / _count).
	CHECK(value_of(e, "tcmud_command_latency_seconds_sum", {{"device", "lun0"}, {"queue", "0"}}) ==
	      Approx(0.006009));
	CHECK(value_of(e, "tcmud_command_latency_seconds_sum", {{"device", "lun0"}, {"queue", "1"}}) == 0);
	// Past the last bound: only +Inf holds it.
	CHECK(value_of(e, "tcmud_command_latency_seconds_bucket",
		       {{"device", "lun0"}, {"queue", "1"}, {"le", "68.719476735"}}) == 0);
	CHECK(value_of(e, "tcmud_command_latency_seconds_bucket",
		       {{"device", "lun0"}, {"queue", "1"}, {"le", "+Inf"}}) == 7);
}

TEST_CASE("metrics: no device is a valid exposition too")
{
	exposition e = strict_parser{}.parse(ctl::prometheus_text({}));
	// Only the daemon's build_info; "unknown" from a daemon too old to say.
	REQUIRE(e.samples.size() == 1);
	CHECK(value_of(e, "tcmud_build_info", {{"version", "unknown"}}) == 1);
	CHECK(e.types.count("tcmud_commands_total"));
}

TEST_CASE("metrics: device state, lock owner, reopens and build_info")
{
	control::control_reply r = sample_reply();
	r.version = "0.1.0";
	r.devices[0].state = "serving";
	r.devices[1].subtype = "rbd";
	r.devices[1].state = "standby";
	r.devices[1].lock_owner = "client.4151 (10.0.2.2:0/\"x\")";
	r.devices[1].reopens = 3;
	control::device_report c = r.devices[0];
	c.name = "lun2";
	c.state = "owner";
	c.lock_owner = "client.4099";
	c.lock_owner_is_us = true;
	r.devices.push_back(c);
	exposition e = strict_parser{}.parse(ctl::prometheus_text(r));
	CHECK(e.types.at("tcmud_device_state") == "gauge");
	CHECK(e.types.at("tcmud_device_reopens_total") == "counter");
	CHECK(value_of(e, "tcmud_build_info", {{"version", "0.1.0"}}) == 1);
	// One series per state, 1 for the current one.
	for (const char *st : {"serving", "owner", "standby", "lost", "fenced"}) {
		CHECK(value_of(e, "tcmud_device_state", {{"device", "lun0"}, {"state", st}}) ==
		      (std::string(st) == "serving" ? 1 : 0));
		CHECK(value_of(e, "tcmud_device_state",
			       {{"device", "we\"ird\\name"}, {"state", st}}) ==
		      (std::string(st) == "standby" ? 1 : 0));
	}
	CHECK(value_of(e, "tcmud_device_lock_owner_info",
		       {{"device", "we\"ird\\name"}, {"owner", "client.4151 (10.0.2.2:0/\"x\")"},
			{"is_us", "0"}}) == 1);
	CHECK(value_of(e, "tcmud_device_lock_owner_info",
		       {{"device", "lun2"}, {"owner", "client.4099"}, {"is_us", "1"}}) == 1);
	CHECK_THROWS(value_of(e, "tcmud_device_lock_owner_info", {{"device", "lun0"}}));
	CHECK(value_of(e, "tcmud_device_reopens_total", {{"device", "we\"ird\\name"}}) == 3);
	CHECK(value_of(e, "tcmud_device_reopens_total", {{"device", "lun0"}}) == 0);
	// A state this tcmudctl does not know (a newer daemon) is kept.
	r.devices[0].state = "draining";
	e = strict_parser{}.parse(ctl::prometheus_text(r));
	CHECK(value_of(e, "tcmud_device_state", {{"device", "lun0"}, {"state", "draining"}}) == 1);
}

TEST_CASE("metrics: the strict parser refuses what the format forbids")
{
	auto refuses = [](const std::string &t) {
		try {
			strict_parser{}.parse(t);
		} catch (const std::exception &) {
			return true;
		}
		return false;
	};
	CHECK(refuses("x_total 1\n"));                                   // no TYPE
	CHECK(refuses("# TYPE x counter\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n")); // duplicate
	CHECK(refuses("# TYPE x counter\nx{a=\"\\q\"} 1\n"));             // bad escape
	CHECK(refuses("# TYPE x counter\n# TYPE y counter\nx 1\ny 1\nx{a=\"2\"} 1\n")); // split
	CHECK(refuses("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n"));
	CHECK(refuses("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n")); // no +Inf
	CHECK_FALSE(refuses("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n"));
}

TEST_CASE("metrics: promtool check metrics accepts the exposition")
{
	const char *promtool = "/usr/bin/promtool";
	if (access(promtool, X_OK) != 0) {
		WARN("no " << promtool << " (Debian's prometheus package): strict parser only");
		return;
	}
	auto path = std::filesystem::temp_directory_path() / ("tcmud-metrics-" + std::to_string(getpid()));
	{
		std::ofstream f(path);
		f << ctl::prometheus_text(sample_reply());
	}
	std::string cmd = std::string(promtool) + " check metrics < " + path.string() + " 2>&1";
	FILE *p = popen(cmd.c_str(), "r");
	REQUIRE(p);
	std::string said;
	char buf[256];
	while (std::fgets(buf, sizeof(buf), p))
		said += buf;
	int rc = pclose(p);
	std::filesystem::remove(path);
	INFO(said);
	CHECK(rc == 0);
	CHECK(said.empty());
}
