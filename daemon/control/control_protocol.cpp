// SPDX-License-Identifier: GPL-2.0-or-later
#include "control/control_protocol.h"

#include "control/json.h"

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

// Each reader takes a member of the right type or says which is wrong.
bool get_u64(const json_value &o, std::string_view k, uint64_t &out, std::string *error)
{
	const json_value *v = o.find(k);
	auto n = v ? v->as_u64() : std::nullopt;
	if (!n) {
		*error = "reply: '" + std::string(k) + "' is missing or not a count";
		return false;
	}
	out = *n;
	return true;
}

// For counters added after the first release: a daemon that predates them
// (tcmudctl upgraded first) simply has none to report.
bool get_optional_u64(const json_value &o, std::string_view k, uint64_t &out, std::string *error)
{
	if (!o.find(k)) {
		out = 0;
		return true;
	}
	return get_u64(o, k, out, error);
}

bool get_string(const json_value &o, std::string_view k, std::string &out, std::string *error)
{
	const json_value *v = o.find(k);
	if (!v || !v->is_string()) {
		*error = "reply: '" + std::string(k) + "' is missing or not a string";
		return false;
	}
	out = v->text;
	return true;
}

bool read_counts(const json_value &arr, std::span<uint64_t> out, std::string *error)
{
	if (arr.type != json_value::kind::array || arr.items.size() != out.size()) {
		*error = "reply: sense_keys is not an array of 16 counts";
		return false;
	}
	for (size_t i = 0; i < out.size(); ++i) {
		auto n = arr.items[i].as_u64();
		if (!n) {
			*error = "reply: sense_keys holds a non-count";
			return false;
		}
		out[i] = *n;
	}
	return true;
}

bool read_latency(const json_value &arr, stats::latency_counts &out, std::string *error)
{
	*error = "reply: latency is not a list of [bucket,count] pairs";
	if (arr.type != json_value::kind::array)
		return false;
	for (const json_value &pair : arr.items) {
		if (pair.type != json_value::kind::array || pair.items.size() != 2)
			return false;
		auto i = pair.items[0].as_u64();
		auto n = pair.items[1].as_u64();
		if (!i || !n || *i >= out.size())
			return false;
		out[*i] = *n;
	}
	error->clear();
	return true;
}

bool read_queue(const json_value &o, stats::queue_snapshot &q, std::string *error)
{
	const json_value *sk = o.find("sense_keys");
	const json_value *lat = o.find("latency");
	if (!sk || !lat) {
		*error = "reply: a queue without sense_keys or latency";
		return false;
	}
	return get_u64(o, "commands", q.commands, error) &&
	       get_u64(o, "bytes_read", q.bytes_read, error) &&
	       get_u64(o, "bytes_written", q.bytes_written, error) &&
	       get_u64(o, "errors", q.errors, error) &&
	       get_u64(o, "malformed", q.malformed, error) &&
	       get_u64(o, "doorbells", q.doorbells, error) &&
	       get_u64(o, "tmrs", q.tmrs, error) && get_u64(o, "aborted", q.aborted, error) &&
	       get_optional_u64(o, "ring_resets", q.ring_resets, error) &&
	       get_optional_u64(o, "stale_results", q.stale_results, error) &&
	       get_u64(o, "depth", q.depth, error) &&
	       get_u64(o, "max_depth", q.max_depth, error) &&
	       read_counts(*sk, q.sense_keys, error) && read_latency(*lat, q.latency, error);
}

bool read_device(const json_value &o, device_report &d, std::string *error)
{
	uint64_t block = 0, nq = 0, entries = 0;
	if (!(get_string(o, "name", d.name, error) && get_string(o, "hba", d.hba, error) &&
	      get_string(o, "uio", d.uio, error) && get_string(o, "subtype", d.subtype, error) &&
	      get_string(o, "cfgstring", d.cfgstring, error) &&
	      get_string(o, "state", d.state, error) &&
	      get_u64(o, "size", d.size_bytes, error) && get_u64(o, "block_size", block, error) &&
	      get_u64(o, "nr_queues", nq, error) &&
	      get_u64(o, "max_in_flight", d.max_in_flight, error) &&
	      get_u64(o, "uring_entries", entries, error)))
		return false;
	d.block_size = uint32_t(block);
	d.nr_queues = uint32_t(nq);
	d.uring_entries = uint32_t(entries);
	const json_value *qs = o.find("queues");
	if (!qs)
		return true;
	if (qs->type != json_value::kind::array) {
		*error = "reply: queues is not an array";
		return false;
	}
	d.queues.resize(qs->items.size());
	for (size_t i = 0; i < qs->items.size(); ++i)
		if (!read_queue(qs->items[i], d.queues[i], error))
			return false;
	return true;
}

} // namespace

std::optional<control_request> parse_request(std::string_view line, std::string *error)
{
	std::string why;
	auto v = parse_json(line, &why);
	if (!v) {
		*error = "malformed request (" + why + ")";
		return std::nullopt;
	}
	if (v->type != json_value::kind::object) {
		*error = "malformed request (not a JSON object)";
		return std::nullopt;
	}
	const json_value *cmd = v->find("command");
	if (!cmd || !cmd->is_string()) {
		*error = "malformed request (no \"command\" string)";
		return std::nullopt;
	}
	control_request req;
	if (cmd->text == "list") {
		req.what = control_request::kind::list;
	} else if (cmd->text == "stats") {
		req.what = control_request::kind::stats;
	} else {
		*error = "unknown command '" + cmd->text + "' (list, stats)";
		return std::nullopt;
	}
	for (const auto &[k, val] : v->members) {
		if (k == "command")
			continue;
		if (k == "device" && req.what == control_request::kind::stats && val.is_string()) {
			req.device = val.text;
			continue;
		}
		*error = "unexpected or invalid member '" + k + "' for " + cmd->text;
		return std::nullopt;
	}
	return req;
}

std::string format_request(const control_request &req)
{
	json_writer w;
	w.begin_object();
	w.key("command").value(req.what == control_request::kind::list ? "list" : "stats");
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

std::string answer(std::string_view line, const report_source &source, uint64_t time_ns)
{
	std::string error;
	auto req = parse_request(line, &error);
	if (!req)
		return format_error(error);
	bool with_stats = req->what == control_request::kind::stats;
	std::vector<device_report> devices = source(with_stats);
	if (!req->device.empty()) {
		std::erase_if(devices, [&](const device_report &d) { return d.name != req->device; });
		if (devices.empty())
			return format_error("no device named '" + req->device + "'");
	}
	json_writer w;
	w.begin_object();
	w.key("ok").value(true);
	w.key("time_ns").value(time_ns);
	w.key("devices").begin_array();
	for (const device_report &d : devices)
		write_device(w, d, with_stats);
	w.end_array();
	w.end_object();
	return w.text();
}

std::optional<control_reply> parse_reply(std::string_view line, std::string *error)
{
	std::string why;
	auto v = parse_json(line, &why);
	if (!v || v->type != json_value::kind::object) {
		*error = "malformed reply from the daemon" + (why.empty() ? "" : " (" + why + ")");
		return std::nullopt;
	}
	const json_value *ok = v->find("ok");
	if (!ok || ok->type != json_value::kind::boolean) {
		*error = "malformed reply from the daemon (no \"ok\")";
		return std::nullopt;
	}
	if (!ok->boolean) {
		const json_value *msg = v->find("error");
		*error = msg && msg->is_string() ? msg->text : "the daemon refused the request";
		return std::nullopt;
	}
	control_reply r;
	if (!get_u64(*v, "time_ns", r.time_ns, error))
		return std::nullopt;
	const json_value *devs = v->find("devices");
	if (!devs || devs->type != json_value::kind::array) {
		*error = "reply: devices is missing";
		return std::nullopt;
	}
	r.devices.resize(devs->items.size());
	for (size_t i = 0; i < devs->items.size(); ++i)
		if (!read_device(devs->items[i], r.devices[i], error))
			return std::nullopt;
	return r;
}

} // namespace tcmud::control
