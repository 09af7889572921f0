// SPDX-License-Identifier: GPL-2.0-or-later
#include "config/daemon_config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "config/config_text.h"
#include "tcmud/setup_result.h"

namespace tcmud {
namespace {

bool valid_key(std::string_view key)
{
	if (key.empty())
		return false;
	for (char c : key)
		if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '_')
			return false;
	return true;
}

// Success if the line is blank, a comment or "key = value" (then *key,
// *value are set), else EINVAL and what is wrong with it.
setup_result<void> split_line(std::string_view line, std::string_view *key, std::string_view *value)
{
	line = trim_blanks(line);
	*key = {};
	if (line.empty() || line[0] == '#')
		return {};
	size_t eq = line.find('=');
	if (eq == std::string_view::npos)
		return setup_error{EINVAL,
				   "expected \"key = value\", found \"" + std::string(line) + "\""};
	*key = trim_blanks(line.substr(0, eq));
	if (!valid_key(*key))
		return setup_error{EINVAL, "\"" + std::string(*key) + "\" is not a key "
						   "(lower-case letters, digits, _)"};
	std::string_view v = trim_blanks(line.substr(eq + 1));
	if (!v.empty() && v[0] == '"') {
		size_t close = v.find('"', 1);
		if (close == std::string_view::npos)
			return setup_error{EINVAL, std::string(*key) +
							   ": the quoted value has no closing \""};
		std::string_view rest = trim_blanks(v.substr(close + 1));
		if (!rest.empty() && rest[0] != '#')
			return setup_error{EINVAL, std::string(*key) +
							   ": unexpected text after the quoted value"};
		*value = v.substr(1, close - 1);
	} else {
		// '#' after white space starts a comment; inside a word it is text.
		size_t hash = v.find(" #");
		if (hash == std::string_view::npos)
			hash = v.find("\t#");
		if (!v.empty() && v[0] == '#')
			hash = 0;
		*value = trim_blanks(v.substr(0, hash));
	}
	if (value->empty())
		return setup_error{EINVAL, std::string(*key) + " has no value"};
	return {};
}

// A decimal number from lo to hi; nullopt for anything else.
std::optional<unsigned long> parse_number(std::string_view text, unsigned long lo,
					  unsigned long hi)
{
	if (text.empty() || text.size() > 9)
		return std::nullopt;
	unsigned long v = 0;
	for (char c : text) {
		if (c < '0' || c > '9')
			return std::nullopt;
		v = v * 10 + unsigned(c - '0');
	}
	if (v < lo || v > hi)
		return std::nullopt;
	return v;
}

std::string quoted(std::string_view v)
{
	return "\"" + std::string(v) + "\"";
}

using key_setter = setup_result<void> (*)(std::string_view value, daemon_config *out);

setup_result<void> set_log_level_name(std::string_view v, daemon_config *out)
{
	auto level = parse_log_level(v);
	if (!level)
		return setup_error{EINVAL, "log_level: " + quoted(v) +
						   " is not one of error, warn, info, debug"};
	out->level = *level;
	return {};
}

setup_result<void> set_log_dir(std::string_view v, daemon_config *out)
{
	if (v[0] != '/')
		return setup_error{EINVAL, "log_dir: " + quoted(v) + " is not an absolute path"};
	out->log_dir = std::string(v);
	return {};
}

setup_result<void> set_control_socket(std::string_view v, daemon_config *out)
{
	if (auto checked = check_control_socket(v); !checked)
		return setup_error{EINVAL, "control_socket: " + checked.error().message};
	out->control_socket = std::string(v);
	return {};
}

setup_result<void> set_max_in_flight(std::string_view v, daemon_config *out)
{
	auto n = parse_number(v, 1, 65535);
	if (!n)
		return setup_error{EINVAL, "max_in_flight: " + quoted(v) + " is not a number "
						   "from 1 to 65535 (cmd_id is 16 bits)"};
	out->max_in_flight = size_t(*n);
	return {};
}

setup_result<void> set_uring_entries(std::string_view v, daemon_config *out)
{
	auto n = parse_number(v, 8, 32768);
	if (!n)
		return setup_error{EINVAL, "uring_entries: " + quoted(v) +
						   " is not a number from 8 to 32768"};
	out->uring_entries = unsigned(*n);
	return {};
}

setup_result<void> set_max_transfer_kb(std::string_view v, daemon_config *out)
{
	auto n = parse_number(v, 4, 1048576);
	if (!n)
		return setup_error{EINVAL, "max_transfer_kb: " + quoted(v) +
						   " is not a number from 4 to 1048576"};
	out->max_transfer_kb = *n;
	return {};
}

// A true/false key: the value, or an error naming the key.
setup_result<void> set_flag(std::string_view key, std::string_view v, std::optional<bool> *out)
{
	if (v == "true")
		*out = true;
	else if (v == "false")
		*out = false;
	else
		return setup_error{EINVAL, std::string(key) + ": " + quoted(v) +
						   " is neither true nor false"};
	return {};
}

setup_result<void> set_dbus(std::string_view v, daemon_config *out)
{
	return set_flag("dbus", v, &out->dbus);
}

setup_result<void> set_queue_cpus(std::string_view v, daemon_config *out)
{
	auto p = parse_queue_placement(v);
	if (!p)
		return setup_error{EINVAL, "queue_cpus: " + quoted(v) + ": " + p.error().message +
						   " (want auto, none or a list like 0-3,8)"};
	out->queue_cpus = std::move(*p);
	return {};
}

setup_result<void> set_fixed_buffers(std::string_view v, daemon_config *out)
{
	return set_flag("fixed_buffers", v, &out->fixed_buffers);
}

setup_result<void> set_copy_groups(std::string_view v, daemon_config *out)
{
	auto g = parse_copy_groups(v);
	if (!g)
		return setup_error{EINVAL, "copy_groups: " + quoted(v) + ": " + g.error().message};
	out->copy_groups = std::move(*g);
	return {};
}

// tcmu-runner: 0 CRIT, 1 ERROR, 2 WARNING, 3 INFO, 4 DEBUG, 5 DEBUG SCSI CMD.
setup_result<void> set_tcmu_log_level(std::string_view v, daemon_config *out)
{
	static constexpr log_level map[] = {log_level::error, log_level::error, log_level::warn,
					    log_level::info,  log_level::debug, log_level::debug};
	auto n = parse_number(v, 0, 999'999'999);
	if (!n)
		return setup_error{EINVAL, "log_level: " + quoted(v) +
						   " is not a tcmu-runner level (a number, 0 to 5)"};
	// tcmu-runner clamps a level above 5 to its most verbose, so files
	// with log_level = 7 exist and must not stop the daemon.
	if (*n > 5)
		log_warn("", "tcmu.conf: log_level %lu is above tcmu-runner's 5 (DEBUG SCSI CMD); "
			 "using debug, as tcmu-runner does", *n);
	out->level = map[std::min<unsigned long>(*n, 5)];
	return {};
}

struct key_table {
	std::map<std::string_view, key_setter> setters;
	bool unknown_is_error;
};

bool parse_with(const key_table &table, std::string_view text, std::string_view file_name,
		daemon_config *out, std::vector<std::string> *errors)
{
	std::map<std::string, unsigned> first_line;
	bool ok = true;
	unsigned line_no = 0;
	auto fail = [&](const std::string &what) {
		errors->push_back(std::string(file_name) + ":" + std::to_string(line_no) + ": " + what);
		ok = false;
	};
	while (!text.empty()) {
		size_t nl = text.find('\n');
		std::string_view line = text.substr(0, nl);
		text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
		++line_no;
		// A path cut at a NUL by the C calls that use it would be another
		// path than the one reported; a text file has none.
		if (line.find('\0') != std::string_view::npos) {
			fail("the line contains a NUL byte");
			continue;
		}
		std::string_view key, value;
		if (auto split = split_line(line, &key, &value); !split) {
			fail(split.error().message);
			continue;
		}
		if (key.empty())
			continue;
		auto setter = table.setters.find(key);
		if (setter == table.setters.end()) {
			if (table.unknown_is_error)
				fail("unknown key " + quoted(key));
			continue;
		}
		auto [seen, fresh] = first_line.emplace(std::string(key), line_no);
		if (!fresh) {
			fail(std::string(key) + " is given twice (first on line " +
			     std::to_string(seen->second) + ")");
			continue;
		}
		if (auto set = setter->second(value, out); !set)
			fail(set.error().message);
	}
	return ok;
}

enum class if_missing : uint8_t { empty, error };

// The file's text; "" if it is missing and that is fine.
setup_result<std::string> read_file(const std::string &path, if_missing missing)
{
	std::ifstream in(path);
	if (!in) {
		setup_error e{errno, path};
		if (e.error == ENOENT && missing == if_missing::empty)
			return std::string();
		return e;
	}
	std::ostringstream ss;
	ss << in.rdbuf();
	return ss.str();
}

} // namespace

void daemon_config::merge_from(const daemon_config &over)
{
	if (over.level)
		level = over.level;
	if (over.log_dir)
		log_dir = over.log_dir;
	if (over.control_socket)
		control_socket = over.control_socket;
	if (over.max_in_flight)
		max_in_flight = over.max_in_flight;
	if (over.uring_entries)
		uring_entries = over.uring_entries;
	if (over.max_transfer_kb)
		max_transfer_kb = over.max_transfer_kb;
	if (over.dbus)
		dbus = over.dbus;
	if (over.queue_cpus)
		queue_cpus = over.queue_cpus;
	if (over.fixed_buffers)
		fixed_buffers = over.fixed_buffers;
	if (over.copy_groups)
		copy_groups = over.copy_groups;
}

bool parse_tcmud_conf(std::string_view text, std::string_view file_name, daemon_config *out,
		      std::vector<std::string> *errors)
{
	static const key_table table = {
		{
			{"log_level", set_log_level_name},
			{"log_dir", set_log_dir},
			{"control_socket", set_control_socket},
			{"max_in_flight", set_max_in_flight},
			{"uring_entries", set_uring_entries},
			{"max_transfer_kb", set_max_transfer_kb},
			{"dbus", set_dbus},
			{"queue_cpus", set_queue_cpus},
			{"fixed_buffers", set_fixed_buffers},
			{"copy_groups", set_copy_groups},
		},
		true,
	};
	return parse_with(table, text, file_name, out, errors);
}

bool parse_tcmu_conf(std::string_view text, std::string_view file_name, daemon_config *out,
		     std::vector<std::string> *errors)
{
	static const key_table table = {
		{
			{"log_level", set_tcmu_log_level},
			{"log_dir", set_log_dir},
		},
		false,
	};
	return parse_with(table, text, file_name, out, errors);
}

setup_result<void> check_control_socket(std::string_view path)
{
	if (path == "none" || (path.starts_with('/') && path.size() <= 107 &&
				 path.find('\0') == std::string_view::npos))
		return {};
	return setup_error{EINVAL, quoted(path) + " is neither none nor an absolute path of at "
						  "most 107 bytes (without NUL)"};
}

bool load_daemon_config(const config_paths &paths, daemon_config *out,
			std::vector<std::string> *errors)
{
	bool ok = true;
	daemon_config from_tcmu, from_tcmud;
	// A file that cannot be read is one more diagnostic in the list.
	auto unreadable = [&](const setup_error &e) {
		errors->push_back(e.what());
		ok = false;
	};
	if (!paths.tcmu_conf.empty()) {
		if (auto text = read_file(paths.tcmu_conf, if_missing::empty))
			ok &= parse_tcmu_conf(*text, paths.tcmu_conf, &from_tcmu, errors);
		else
			unreadable(text.error());
	}
	if (auto text = read_file(paths.tcmud_conf,
				   paths.tcmud_conf_required ? if_missing::error : if_missing::empty))
		ok &= parse_tcmud_conf(*text, paths.tcmud_conf, &from_tcmud, errors);
	else
		unreadable(text.error());
	out->merge_from(from_tcmu);
	out->merge_from(from_tcmud);
	return ok;
}

} // namespace tcmud
