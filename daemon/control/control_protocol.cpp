// SPDX-License-Identifier: GPL-2.0-or-later
#include "control/control_protocol.h"

#include "control/json.h"

#include <cerrno>
#include <utility>

namespace tcmud::control {
namespace {

void write_queue(json_writer &w, size_t index, const stats::queue_snapshot &q)
{
	w.begin_object();
	w.key("index").value(uint64_t(index));
	w.key("commands").value(q.commands);
	w.key("bytes_read").value(q.bytes_read);
	w.key("bytes_written").value(q.bytes_written);
	w.key("errors").value(q.errors);
	w.key("malformed").value(q.malformed);
	w.key("doorbells").value(q.doorbells);
	w.key("tmrs").value(q.tmrs);
	w.key("aborted").value(q.aborted);
	w.key("ring_resets").value(q.ring_resets);
	w.key("stale_results").value(q.stale_results);
	w.key("depth").value(q.depth);
	w.key("max_depth").value(q.max_depth);
	w.key("fixed_buffers").value(q.fixed_buffers);
	w.key("latency_sum_ns").value(q.latency_sum_ns);
	w.key("sense_keys").begin_array();
	for (uint64_t n : q.sense_keys)
		w.value(n);
	w.end_array();
	w.key("latency").begin_array();
	for (size_t i = 0; i < q.latency.size(); ++i)
		if (q.latency[i])
			w.begin_array().value(uint64_t(i)).value(q.latency[i]).end_array();
	w.end_array();
	w.end_object();
}

void write_device(json_writer &w, const device_report &d, bool with_stats)
{
	w.begin_object();
	w.key("name").value(d.name);
	w.key("hba").value(d.hba);
	w.key("uio").value(d.uio);
	w.key("subtype").value(d.subtype);
	w.key("cfgstring").value(d.cfgstring);
	w.key("state").value(d.state);
	if (!d.lock_owner.empty()) {
		w.key("lock_owner").value(d.lock_owner);
		w.key("lock_owner_is_us").value(d.lock_owner_is_us);
	}
	w.key("reopens").value(d.reopens);
	w.key("size").value(d.size_bytes);
	w.key("block_size").value(uint64_t(d.block_size));
	w.key("nr_queues").value(uint64_t(d.nr_queues));
	w.key("max_in_flight").value(d.max_in_flight);
	w.key("uring_entries").value(uint64_t(d.uring_entries));
	if (with_stats) {
		w.key("queues").begin_array();
		for (size_t i = 0; i < d.queues.size(); ++i)
			write_queue(w, i, d.queues[i]);
		w.end_array();
	}
	w.end_object();
}

// Each reader takes a member of the right type or says (EPROTO) which is
// wrong.
setup_error bad_reply(std::string what)
{
	return setup_error{EPROTO, "reply: " + std::move(what)};
}

setup_result<void> get_u64(const json_value &o, std::string_view k, uint64_t &out)
{
	const json_value *v = o.find(k);
	auto n = v ? v->as_u64() : std::nullopt;
	if (!n)
		return bad_reply("'" + std::string(k) + "' is missing or not a count");
	out = *n;
	return {};
}

// For counters added after the first release: a daemon that predates them
// (tcmudctl upgraded first) simply has none to report.
setup_result<void> get_optional_u64(const json_value &o, std::string_view k, uint64_t &out)
{
	if (!o.find(k)) {
		out = 0;
		return {};
	}
	return get_u64(o, k, out);
}

setup_result<void> get_string(const json_value &o, std::string_view k, std::string &out)
{
	const json_value *v = o.find(k);
	if (!v || !v->is_string())
		return bad_reply("'" + std::string(k) + "' is missing or not a string");
	out = v->text;
	return {};
}

setup_result<void> read_counts(const json_value &arr, std::span<uint64_t> out)
{
	if (arr.type != json_value::kind::array || arr.items.size() != out.size())
		return bad_reply("sense_keys is not an array of 16 counts");
	for (size_t i = 0; i < out.size(); ++i) {
		auto n = arr.items[i].as_u64();
		if (!n)
			return bad_reply("sense_keys holds a non-count");
		out[i] = *n;
	}
	return {};
}

setup_result<void> read_latency(const json_value &arr, stats::latency_counts &out)
{
	auto bad = [] { return bad_reply("latency is not a list of [bucket,count] pairs"); };
	if (arr.type != json_value::kind::array)
		return bad();
	for (const json_value &pair : arr.items) {
		if (pair.type != json_value::kind::array || pair.items.size() != 2)
			return bad();
		auto i = pair.items[0].as_u64();
		auto n = pair.items[1].as_u64();
		if (!i || !n || *i >= out.size())
			return bad();
		out[*i] = *n;
	}
	return {};
}

setup_result<void> read_queue(const json_value &o, stats::queue_snapshot &q)
{
	const json_value *sk = o.find("sense_keys");
	const json_value *lat = o.find("latency");
	if (!sk || !lat)
		return bad_reply("a queue without sense_keys or latency");
	const std::pair<std::string_view, uint64_t *> counts[] = {
		{"commands", &q.commands}, {"bytes_read", &q.bytes_read},
		{"bytes_written", &q.bytes_written}, {"errors", &q.errors},
		{"malformed", &q.malformed}, {"doorbells", &q.doorbells},
		{"tmrs", &q.tmrs}, {"aborted", &q.aborted},
		{"depth", &q.depth}, {"max_depth", &q.max_depth},
	};
	for (auto [k, out] : counts)
		if (auto got = get_u64(o, k, *out); !got)
			return got;
	const std::pair<std::string_view, uint64_t *> later_counts[] = {
		{"ring_resets", &q.ring_resets}, {"stale_results", &q.stale_results},
		{"fixed_buffers", &q.fixed_buffers}, {"latency_sum_ns", &q.latency_sum_ns},
	};
	for (auto [k, out] : later_counts)
		if (auto got = get_optional_u64(o, k, *out); !got)
			return got;
	if (auto got = read_counts(*sk, q.sense_keys); !got)
		return got;
	return read_latency(*lat, q.latency);
}

setup_result<void> read_device(const json_value &o, device_report &d)
{
	const std::pair<std::string_view, std::string *> strings[] = {
		{"name", &d.name}, {"hba", &d.hba}, {"uio", &d.uio},
		{"subtype", &d.subtype}, {"cfgstring", &d.cfgstring}, {"state", &d.state},
	};
	for (auto [k, out] : strings)
		if (auto got = get_string(o, k, *out); !got)
			return got;
	if (const json_value *v = o.find("lock_owner")) {
		if (!v->is_string())
			return bad_reply("'lock_owner' is not a string");
		d.lock_owner = v->text;
		const json_value *us = o.find("lock_owner_is_us");
		if (!us || us->type != json_value::kind::boolean)
			return bad_reply("'lock_owner_is_us' is missing or not a boolean");
		d.lock_owner_is_us = us->boolean;
	}
	if (auto got = get_optional_u64(o, "reopens", d.reopens); !got)
		return got;
	uint64_t block = 0, nq = 0, entries = 0;
	const std::pair<std::string_view, uint64_t *> counts[] = {
		{"size", &d.size_bytes}, {"block_size", &block}, {"nr_queues", &nq},
		{"max_in_flight", &d.max_in_flight}, {"uring_entries", &entries},
	};
	for (auto [k, out] : counts)
		if (auto got = get_u64(o, k, *out); !got)
			return got;
	d.block_size = uint32_t(block);
	d.nr_queues = uint32_t(nq);
	d.uring_entries = uint32_t(entries);
	const json_value *qs = o.find("queues");
	if (!qs)
		return {};
	if (qs->type != json_value::kind::array)
		return bad_reply("queues is not an array");
	d.queues.resize(qs->items.size());
	for (size_t i = 0; i < qs->items.size(); ++i)
		if (auto got = read_queue(qs->items[i], d.queues[i]); !got)
			return got;
	return {};
}

} // namespace

setup_result<control_request> parse_request(std::string_view line)
{
	auto malformed = [](const std::string &why) {
		return setup_error{EINVAL, "malformed request (" + why + ")"};
	};
	auto v = parse_json(line);
	if (!v)
		return malformed(v.error().message);
	if (v->type != json_value::kind::object)
		return malformed("not a JSON object");
	const json_value *cmd = v->find("command");
	if (!cmd || !cmd->is_string())
		return malformed("no \"command\" string");
	control_request req;
	if (cmd->text == "list")
		req.what = control_request::kind::list;
	else if (cmd->text == "stats")
		req.what = control_request::kind::stats;
	else if (cmd->text == "reload")
		req.what = control_request::kind::reload;
	else
		return setup_error{EINVAL,
				   "unknown command '" + cmd->text + "' (list, stats, reload)"};
	for (const auto &[k, val] : v->members) {
		if (k == "command")
			continue;
		if (k == "device" && req.what == control_request::kind::stats && val.is_string()) {
			req.device = val.text;
			continue;
		}
		return setup_error{EINVAL,
				   "unexpected or invalid member '" + k + "' for " + cmd->text};
	}
	return req;
}

std::string format_request(const control_request &req)
{
	json_writer w;
	w.begin_object();
	w.key("command").value(req.what == control_request::kind::list	   ? "list"
			       : req.what == control_request::kind::stats ? "stats"
									  : "reload");
	if (!req.device.empty())
		w.key("device").value(req.device);
	w.end_object();
	return w.text();
}

std::string format_error(std::string_view message)
{
	json_writer w;
	w.begin_object().key("ok").value(false).key("error").value(message).end_object();
	return w.text();
}

std::string answer(std::string_view line, const report_source &source, uint64_t time_ns,
		   const reload_action &reload, std::string_view version)
{
	auto req = parse_request(line);
	if (!req)
		return format_error(req.error().message);
	bool with_stats = req->what == control_request::kind::stats;
	std::vector<device_report> devices;
	if (req->what == control_request::kind::reload) {
		if (!reload)
			return format_error("this daemon does not reload through its socket");
		if (std::string refused = reload(); !refused.empty())
			return format_error(refused);
	} else {
		devices = source(with_stats);
	}
	if (!req->device.empty()) {
		std::erase_if(devices, [&](const device_report &d) { return d.name != req->device; });
		if (devices.empty())
			return format_error("no device named '" + req->device + "'");
	}
	json_writer w;
	w.begin_object();
	w.key("ok").value(true);
	w.key("time_ns").value(time_ns);
	if (!version.empty())
		w.key("version").value(version);
	w.key("devices").begin_array();
	for (const device_report &d : devices)
		write_device(w, d, with_stats);
	w.end_array();
	w.end_object();
	return w.text();
}

setup_result<control_reply> parse_reply(std::string_view line)
{
	auto v = parse_json(line);
	if (!v)
		return setup_error{EPROTO,
				   "malformed reply from the daemon (" + v.error().message + ")"};
	if (v->type != json_value::kind::object)
		return setup_error{EPROTO, "malformed reply from the daemon"};
	const json_value *ok = v->find("ok");
	if (!ok || ok->type != json_value::kind::boolean)
		return setup_error{EPROTO, "malformed reply from the daemon (no \"ok\")"};
	if (!ok->boolean) {
		const json_value *msg = v->find("error");
		return setup_error{EPROTO, msg && msg->is_string()
						   ? msg->text
						   : "the daemon refused the request"};
	}
	control_reply r;
	if (auto got = get_u64(*v, "time_ns", r.time_ns); !got)
		return got.error();
	if (const json_value *ver = v->find("version")) {
		if (!ver->is_string())
			return bad_reply("'version' is not a string");
		r.version = ver->text;
	}
	const json_value *devs = v->find("devices");
	if (!devs || devs->type != json_value::kind::array)
		return bad_reply("devices is missing");
	r.devices.resize(devs->items.size());
	for (size_t i = 0; i < devs->items.size(); ++i)
		if (auto got = read_device(devs->items[i], r.devices[i]); !got)
			return got.error();
	return r;
}

} // namespace tcmud::control
