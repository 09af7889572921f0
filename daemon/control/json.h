// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The little JSON the control socket speaks: a writer that builds one line,
// and a parser for what comes back. Numbers keep their text, so a 64-bit
// counter survives the trip exactly (a double would round it above 2^53).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tcmud/setup_result.h"

namespace tcmud::control {

class json_writer {
public:
	json_writer &begin_object();
	json_writer &end_object();
	json_writer &begin_array();
	json_writer &end_array();
	json_writer &key(std::string_view k);
	json_writer &value(std::string_view s);
	json_writer &value(const char *s) { return value(std::string_view(s)); }
	json_writer &value(uint64_t n);
	json_writer &value(double d);
	json_writer &value(bool b);
	const std::string &text() const { return out_; }

private:
	void separate();
	std::string out_;
	bool need_comma_ = false;
};

struct json_value {
	enum class kind { null, boolean, number, string, array, object };
	kind type = kind::null;
	bool boolean = false;
	std::string text; // a string's value, or a number as written
	std::vector<json_value> items;
	std::map<std::string, json_value, std::less<>> members;

	// Member lookup: nullptr if this is not an object or has no such key.
	const json_value *find(std::string_view k) const;
	// The number as an unsigned integer, if it is one.
	std::optional<uint64_t> as_u64() const;
	std::optional<double> as_double() const;
	bool is_string() const { return type == kind::string; }
};

// Parses one complete JSON text (surrounding whitespace allowed). Nesting
// deeper than 32 is refused, so a hostile line cannot exhaust the stack.
// EINVAL and "at byte N: what" on malformed input.
setup_result<json_value> parse_json(std::string_view text);

} // namespace tcmud::control
