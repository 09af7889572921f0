// SPDX-License-Identifier: GPL-2.0-or-later
// The control socket's JSON and request/reply protocol, without a socket:
// malformed input is refused with a reason, a reply carries every counter
// exactly (64-bit values included) and tcmudctl's view computes from it.
#include <catch2/catch.hpp>

#include <string>

#include "control/control_protocol.h"
#include "control/json.h"
#include "stats_view.h"

using namespace tcmud::control;

namespace {

// True if r is a refusal; its message goes to err.
template <class T>
bool refused(const tcmud::setup_result<T> &r, std::string &err)
{
	err = r ? std::string() : r.error().message;
	return !r;
}

} // namespace

TEST_CASE("json: valid texts parse, with numbers kept exactly")
{
	auto v = parse_json(R"( {"a":[1,2.5,-3e2,true,false,null],"b":{"c":"x\"y\\z\u0001"},
		"big":18446744073709551615} )");
	REQUIRE(v);
	REQUIRE(v->find("a")->items.size() == 6);
	REQUIRE(v->find("a")->items[1].as_double() == Approx(2.5));
	REQUIRE_FALSE(v->find("a")->items[1].as_u64());
	REQUIRE(v->find("b")->find("c")->text == "x\"y\\z\x01");
	REQUIRE(v->find("big")->as_u64() == UINT64_MAX);
}

TEST_CASE("json: malformed texts are refused with where and why")
{
	const char *bad[] = {
		"", "{", "{\"a\":}", "{\"a\":1,}", "[1 2]", "\"open", "{\"a\":1} x", "{a:1}",
		"[01x]", "tru", "\"\\q\"", "\"tab\there\"", "-", "1.", "1e",
	};
	for (const char *text : bad) {
		std::string err;
		INFO("text: " << text);
		REQUIRE(refused(parse_json(text), err));
		REQUIRE(err.find("at byte") == 0);
	}
	std::string deep(100, '['), err;
	REQUIRE(refused(parse_json(deep), err));
	REQUIRE(err.find("nested too deeply") != std::string::npos);
}

TEST_CASE("json writer: strings are escaped so the parser gets them back")
{
	json_writer w;
	w.begin_object().key("k\"").value("line\nbreak\\ \x02").key("n").value(uint64_t(7)).end_object();
	auto v = parse_json(w.text());
	REQUIRE(v);
	REQUIRE(v->find("k\"")->text == "line\nbreak\\ \x02");
	REQUIRE(w.text().find('\n') == std::string::npos); // one line on the wire
}

TEST_CASE("protocol: requests parse; unknown commands and malformed requests get a clear error")
{
	std::string err;
	auto l = parse_request(R"({"command":"list"})");
	REQUIRE(l);
	REQUIRE(l->what == control_request::kind::list);
	auto s = parse_request(R"({"command":"stats","device":"lun0"})");
	REQUIRE(s);
	REQUIRE(s->what == control_request::kind::stats);
	REQUIRE(s->device == "lun0");

	REQUIRE(refused(parse_request(R"({"command":"reboot"})"), err));
	REQUIRE(err == "unknown command 'reboot' (list, stats, reload)");
	auto r = parse_request(R"({"command":"reload"})");
	REQUIRE(r);
	REQUIRE(r->what == control_request::kind::reload);
	REQUIRE(parse_request(format_request(*r))->what == control_request::kind::reload);
	REQUIRE(refused(parse_request(R"({"command":"reload","device":"lun0"})"), err));
	REQUIRE(refused(parse_request("list"), err));
	REQUIRE(err.find("malformed request") == 0);
	REQUIRE(refused(parse_request("[1]"), err));
	REQUIRE(err == "malformed request (not a JSON object)");
	REQUIRE(refused(parse_request(R"({"cmd":"list"})"), err));
	REQUIRE(err == "malformed request (no \"command\" string)");
	REQUIRE(refused(parse_request(R"({"command":"list","device":"x"})"), err));
	REQUIRE(err.find("unexpected or invalid member 'device'") == 0);
	REQUIRE(refused(parse_request(R"({"command":"stats","device":3})"), err));
}

namespace {

report_source two_devices()
{
	return [](bool with_stats) {
		std::vector<device_report> v(2);
		v[0].name = "lun0";
		v[0].hba = "user_1";
		v[0].uio = "uio0";
		v[0].subtype = "file";
		v[0].cfgstring = "/var/lib/a \"quoted\".img";
		v[0].state = "serving";
		v[0].size_bytes = 1ull << 40;
		v[0].block_size = 4096;
		v[0].nr_queues = 2;
		v[0].max_in_flight = 512;
		v[0].uring_entries = 1024;
		v[1] = v[0];
		v[1].name = "lun1";
		v[1].uio = "uio1";
		v[1].nr_queues = 1;
		if (with_stats) {
			v[0].queues.resize(2);
			v[0].queues[0].commands = (1ull << 63) + 1; // beyond a double's precision
			v[0].queues[0].sense_keys[5] = 4;
			v[0].queues[0].latency[17] = 99;
			v[0].queues[1].bytes_written = 12345;
			v[0].queues[1].max_depth = 31;
			v[0].queues[1].ring_resets = 2;
			v[0].queues[1].stale_results = 7;
			v[0].queues[1].fixed_buffers = 1;
			v[0].queues[1].latency_sum_ns = (1ull << 62) + 3; // exact, not a double
			v[1].queues.resize(1);
		}
		return v;
	};
}

} // namespace

TEST_CASE("protocol: a stats reply round-trips every counter exactly")
{
	std::string line = answer(R"({"command":"stats"})", two_devices(), 123456789);
	REQUIRE(line.find('\n') == std::string::npos);
	auto r = parse_reply(line);
	INFO((r ? "" : r.error().message));
	REQUIRE(r);
	REQUIRE(r->time_ns == 123456789);
	REQUIRE(r->devices.size() == 2);
	const device_report &d = r->devices[0];
	REQUIRE(d.cfgstring == "/var/lib/a \"quoted\".img");
	REQUIRE(d.size_bytes == 1ull << 40);
	REQUIRE(d.block_size == 4096);
	REQUIRE(d.nr_queues == 2);
	REQUIRE(d.max_in_flight == 512);
	REQUIRE(d.uring_entries == 1024);
	REQUIRE(d.queues.size() == 2);
	REQUIRE(d.queues[0].commands == (1ull << 63) + 1);
	REQUIRE(d.queues[0].sense_keys[5] == 4);
	REQUIRE(d.queues[0].latency[17] == 99);
	REQUIRE(d.queues[1].bytes_written == 12345);
	REQUIRE(d.queues[1].max_depth == 31);
	REQUIRE(d.queues[1].ring_resets == 2);
	REQUIRE(d.queues[1].stale_results == 7);
	REQUIRE(d.queues[0].fixed_buffers == 0);
	REQUIRE(d.queues[1].fixed_buffers == 1);
	REQUIRE(d.queues[1].latency_sum_ns == (1ull << 62) + 3);
	REQUIRE(d.queues[0].latency_sum_ns == 0);
}

TEST_CASE("protocol: a reply from a daemon without the ring-reset counters reads them as 0")
{
	std::string line = answer(R"({"command":"stats"})", two_devices(), 1);
	for (std::string key :
	     {"\"ring_resets\":2,", "\"stale_results\":7,", "\"fixed_buffers\":1,"}) {
		size_t at = line.find(key);
		REQUIRE(at != std::string::npos);
		line.erase(at, key.size());
	}
	std::string err;
	auto r = parse_reply(line);
	INFO((r ? "" : r.error().message));
	REQUIRE(r);
	REQUIRE(r->devices[0].queues[1].ring_resets == 0);
	REQUIRE(r->devices[0].queues[1].stale_results == 0);
	REQUIRE(r->devices[0].queues[1].fixed_buffers == 0);
	REQUIRE(r->devices[0].queues[1].max_depth == 31);
	// Present but not a count is still an error.
	std::string bad = answer(R"({"command":"stats"})", two_devices(), 1);
	const std::string count = "\"ring_resets\":2";
	size_t at = bad.find(count);
	REQUIRE(at != std::string::npos);
	bad.replace(at, count.size(), "\"ring_resets\":\"x\"");
	REQUIRE(refused(parse_reply(bad), err));
	REQUIRE(err == "reply: 'ring_resets' is missing or not a count");
}

TEST_CASE("protocol: state, lock owner, reopens and the daemon's version round-trip")
{
	report_source rbd = [](bool with_stats) {
		auto v = two_devices()(with_stats);
		v[1].subtype = "rbd";
		v[1].state = "standby";
		v[1].lock_owner = "client.4151 \"gw-b\"";
		v[1].reopens = 2;
		return v;
	};
	std::string line = answer(R"({"command":"list"})", rbd, 1, {}, "0.1.0");
	auto r = parse_reply(line);
	INFO(line);
	REQUIRE(r);
	CHECK(r->version == "0.1.0");
	CHECK(r->devices[0].state == "serving");
	CHECK(r->devices[0].lock_owner.empty());
	CHECK(r->devices[0].reopens == 0);
	CHECK(r->devices[1].state == "standby");
	CHECK(r->devices[1].lock_owner == "client.4151 \"gw-b\"");
	CHECK_FALSE(r->devices[1].lock_owner_is_us);
	CHECK(r->devices[1].reopens == 2);
	// A file device says nothing of a lock.
	CHECK(line.find("lock_owner", line.find("\"lun0\"")) > line.find("\"lun1\""));

	// An older daemon: no version, no lock members, no reopens.
	std::string old = answer(R"({"command":"list"})", two_devices(), 1);
	for (const std::string key : {"\"reopens\":0,"})
		while (old.find(key) != std::string::npos)
			old.erase(old.find(key), key.size());
	auto o = parse_reply(old);
	INFO(old);
	REQUIRE(o);
	CHECK(o->version.empty());
	CHECK(o->devices[0].reopens == 0);

	// A lock owner without its flag is not what the daemon sends.
	std::string bad = line;
	const std::string flag = ",\"lock_owner_is_us\":false";
	REQUIRE(bad.find(flag) != std::string::npos);
	bad.erase(bad.find(flag), flag.size());
	std::string err;
	REQUIRE(refused(parse_reply(bad), err));
	CHECK(err == "reply: 'lock_owner_is_us' is missing or not a boolean");
}

TEST_CASE("protocol: list has no queues; a device filter picks one or says there is none")
{
	std::string err;
	auto l = parse_reply(answer(R"({"command":"list"})", two_devices(), 1));
	REQUIRE(l);
	REQUIRE(l->devices.size() == 2);
	REQUIRE(l->devices[1].name == "lun1");
	REQUIRE(l->devices[0].queues.empty());

	auto one = parse_reply(answer(R"({"command":"stats","device":"lun1"})", two_devices(), 1));
	REQUIRE(one);
	REQUIRE(one->devices.size() == 1);
	REQUIRE(one->devices[0].uio == "uio1");

	std::string no_such = answer(R"({"command":"stats","device":"nope"})", two_devices(), 1);
	REQUIRE(refused(parse_reply(no_such), err));
	REQUIRE(err == "no device named 'nope'");
	REQUIRE(refused(parse_reply(answer("{{{", two_devices(), 1)), err));
	REQUIRE(err.find("malformed request") == 0);
}

TEST_CASE("protocol: reload says whether the new configuration is in force")
{
	std::string err;
	int runs = 0;
	reload_action taken = [&] { ++runs; return std::string(); };
	auto ok = parse_reply(answer(R"({"command":"reload"})", two_devices(), 7, taken));
	REQUIRE(ok);
	CHECK(ok->devices.empty());
	CHECK(runs == 1);
	reload_action refused_file = [] {
		return std::string("configuration not reloaded (the running one stays): "
				   "/etc/tcmud/tcmud.conf:2: max_in_flight: \"0\" is not a number");
	};
	REQUIRE(refused(parse_reply(answer(R"({"command":"reload"})", two_devices(), 7,
					   refused_file)),
			err));
	CHECK(err.find("tcmud.conf:2: max_in_flight") != std::string::npos);
	// A server that offers no reload says so rather than pretending.
	REQUIRE(refused(parse_reply(answer(R"({"command":"reload"})", two_devices(), 7)), err));
	CHECK(err == "this daemon does not reload through its socket");
	// Other requests never run it.
	(void)answer(R"({"command":"list"})", two_devices(), 7, taken);
	CHECK(runs == 1);
}

TEST_CASE("protocol: a reply that is not what the daemon sends is refused")
{
	std::string err;
	REQUIRE(refused(parse_reply("garbage"), err));
	REQUIRE(refused(parse_reply(R"({"ok":true})"), err));
	REQUIRE(refused(parse_reply(R"({"ok":true,"time_ns":1,"devices":[{"name":"x"}]})"), err));
	std::string bad_bucket = answer(R"({"command":"stats"})", two_devices(), 1);
	auto at = bad_bucket.find("[17,99]");
	REQUIRE(at != std::string::npos);
	bad_bucket.replace(at, 7, "[9999,1]");
	REQUIRE(refused(parse_reply(bad_bucket), err));
	REQUIRE(err.find("latency") != std::string::npos);
}

TEST_CASE("tcmudctl view: with no device the JSON report still says its interval")
{
	control_reply a, b;
	a.time_ns = 1'000'000'000;
	b.time_ns = 1'500'000'000;
	auto rows = tcmud::ctl::build_rows(a, b);
	REQUIRE(rows.empty());
	auto v = parse_json(tcmud::ctl::rows_json(rows, tcmud::ctl::interval_seconds(a, b)));
	REQUIRE(v);
	REQUIRE(v->find("interval_s")->as_double() == Approx(0.5));
	REQUIRE(v->find("devices")->items.empty());
}

TEST_CASE("tcmudctl view: rows per device and per queue from two replies")
{
	auto before = parse_reply(answer(R"({"command":"stats"})", two_devices(), 1'000'000'000));
	REQUIRE(before);
	control_reply after = *before;
	after.time_ns = 3'000'000'000; // 2 s later
	after.devices[0].queues[1].commands += 400;
	after.devices[0].queues[1].bytes_read += 2 << 20;
	after.devices[0].queues[1].latency[20] += 400;
	after.devices[1].queues[0].commands += 100;
	auto rows = tcmud::ctl::build_rows(*before, after);
	REQUIRE(rows.size() == 5); // lun0 all, q0, q1; lun1 all, q0
	REQUIRE(rows[0].device == "lun0");
	REQUIRE(rows[0].queue == -1);
	REQUIRE(rows[0].rates.iops == Approx(200.0));
	REQUIRE(rows[0].rates.read_bytes_per_s == Approx(1048576.0));
	REQUIRE(rows[1].rates.iops == Approx(0.0));
	REQUIRE(rows[2].rates.iops == Approx(200.0));
	REQUIRE(rows[2].rates.p50_ns == tcmud::stats::latency_bucket_high(20));
	REQUIRE(rows[3].device == "lun1");
	REQUIRE(rows[3].rates.iops == Approx(50.0));
	std::string json = tcmud::ctl::rows_json(rows, tcmud::ctl::interval_seconds(*before, after));
	auto v = parse_json(json);
	REQUIRE(v);
	REQUIRE(v->find("interval_s")->as_double() == Approx(2.0));
	REQUIRE(v->find("devices")->items.size() == 2);
	REQUIRE(v->find("devices")->items[0].find("queues")->items.size() == 2);
	REQUIRE(v->find("devices")->items[1].find("iops")->as_double() == Approx(50.0));
}
