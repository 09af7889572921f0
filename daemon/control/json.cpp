// SPDX-License-Identifier: GPL-2.0-or-later
#include "control/json.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace tcmud::control {

void json_writer::separate()
{
	if (need_comma_)
		out_ += ',';
	need_comma_ = true;
}

json_writer &json_writer::begin_object()
{
	separate();
	out_ += '{';
	need_comma_ = false;
	return *this;
}

json_writer &json_writer::end_object()
{
	out_ += '}';
	need_comma_ = true;
	return *this;
}

json_writer &json_writer::begin_array()
{
	separate();
	out_ += '[';
	need_comma_ = false;
	return *this;
}

json_writer &json_writer::end_array()
{
	out_ += ']';
	need_comma_ = true;
	return *this;
}

json_writer &json_writer::key(std::string_view k)
{
	value(k);
	out_ += ':';
	need_comma_ = false;
	return *this;
}

json_writer &json_writer::value(std::string_view s)
{
	separate();
	out_ += '"';
	for (char ch : s) {
		auto c = static_cast<unsigned char>(ch);
		if (c == '"' || c == '\\') {
			out_ += '\\';
			out_ += ch;
		} else if (c < 0x20) {
			char buf[8];
			std::snprintf(buf, sizeof(buf), "\\u%04x", c);
			out_ += buf;
		} else {
			out_ += ch;
		}
	}
	out_ += '"';
	return *this;
}

json_writer &json_writer::value(uint64_t n)
{
	separate();
	out_ += std::to_string(n);
	return *this;
}

json_writer &json_writer::value(double d)
{
	separate();
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.3f", d);
	out_ += buf;
	return *this;
}

json_writer &json_writer::value(bool b)
{
	separate();
	out_ += b ? "true" : "false";
	return *this;
}

const json_value *json_value::find(std::string_view k) const
{
	if (type != kind::object)
		return nullptr;
	auto it = members.find(k);
	return it == members.end() ? nullptr : &it->second;
}

std::optional<uint64_t> json_value::as_u64() const
{
	if (type != kind::number)
		return std::nullopt;
	uint64_t v = 0;
	auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec != std::errc() || end != text.data() + text.size())
		return std::nullopt;
	return v;
}

std::optional<double> json_value::as_double() const
{
	if (type != kind::number)
		return std::nullopt;
	errno = 0;
	char *end = nullptr;
	double d = std::strtod(text.c_str(), &end);
	if (errno || end != text.c_str() + text.size())
		return std::nullopt;
	return d;
}

namespace {

constexpr int max_depth = 32;

class parser {
public:
	explicit parser(std::string_view t) : t_(t) {}

	bool parse(json_value &out, int depth)
	{
		skip_space();
		if (depth > max_depth)
			return fail("nested too deeply");
		if (pos_ >= t_.size())
			return fail("unexpected end");
		char c = t_[pos_];
		if (c == '{')
			return parse_object(out, depth);
		if (c == '[')
			return parse_array(out, depth);
		if (c == '"') {
			out.type = json_value::kind::string;
			return parse_string(out.text);
		}
		if (c == '-' || (c >= '0' && c <= '9'))
			return parse_number(out);
		if (literal("true")) {
			out.type = json_value::kind::boolean;
			out.boolean = true;
			return true;
		}
		if (literal("false")) {
			out.type = json_value::kind::boolean;
			return true;
		}
		if (literal("null"))
			return true;
		return fail("unexpected character");
	}

	bool at_end()
	{
		skip_space();
		return pos_ == t_.size() || fail("trailing characters");
	}

	std::string error() const { return "at byte " + std::to_string(pos_) + ": " + why_; }

private:
	bool fail(const char *why)
	{
		why_ = why;
		return false;
	}

	void skip_space()
	{
		while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' ||
					    t_[pos_] == '\n' || t_[pos_] == '\r'))
			++pos_;
	}

	bool literal(std::string_view word)
	{
		if (t_.substr(pos_, word.size()) != word)
			return false;
		pos_ += word.size();
		return true;
	}

	bool expect(char c)
	{
		skip_space();
		if (pos_ < t_.size() && t_[pos_] == c) {
			++pos_;
			return true;
		}
		return false;
	}

	bool parse_object(json_value &out, int depth)
	{
		out.type = json_value::kind::object;
		++pos_;
		if (expect('}'))
			return true;
		do {
			skip_space();
			std::string k;
			if (pos_ >= t_.size() || t_[pos_] != '"')
				return fail("expected a string key");
			if (!parse_string(k))
				return false;
			if (!expect(':'))
				return fail("expected ':'");
			json_value v;
			if (!parse(v, depth + 1))
				return false;
			out.members.insert_or_assign(std::move(k), std::move(v));
		} while (expect(','));
		return expect('}') || fail("expected ',' or '}'");
	}

	bool parse_array(json_value &out, int depth)
	{
		out.type = json_value::kind::array;
		++pos_;
		if (expect(']'))
			return true;
		do {
			json_value v;
			if (!parse(v, depth + 1))
				return false;
			out.items.push_back(std::move(v));
		} while (expect(','));
		return expect(']') || fail("expected ',' or ']'");
	}

	bool parse_string(std::string &out)
	{
		++pos_; // the opening quote
		while (pos_ < t_.size()) {
			char c = t_[pos_++];
			if (c == '"')
				return true;
			if (static_cast<unsigned char>(c) < 0x20)
				return fail("control character in a string");
			if (c != '\\') {
				out += c;
				continue;
			}
			if (pos_ >= t_.size())
				break;
			char e = t_[pos_++];
			switch (e) {
			case '"': case '\\': case '/': out += e; break;
			case 'n': out += '\n'; break;
			case 't': out += '\t'; break;
			case 'r': out += '\r'; break;
			case 'b': out += '\b'; break;
			case 'f': out += '\f'; break;
			case 'u': {
				// Only what our writer emits (control characters) and
				// plain ASCII; names and paths are ASCII in practice.
				unsigned v = 0;
				auto hex = t_.substr(pos_, 4);
				auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
				if (hex.size() != 4 || ec != std::errc() || end != hex.data() + 4)
					return fail("bad \\u escape");
				if (v > 0x7f)
					return fail("\\u escape beyond ASCII");
				out += char(v);
				pos_ += 4;
				break;
			}
			default:
				return fail("bad escape");
			}
		}
		return fail("unterminated string");
	}

	bool parse_number(json_value &out)
	{
		size_t start = pos_;
		if (t_[pos_] == '-')
			++pos_;
		auto digits = [this] {
			size_t n = 0;
			while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') {
				++pos_;
				++n;
			}
			return n;
		};
		if (digits() == 0)
			return fail("bad number");
		if (pos_ < t_.size() && t_[pos_] == '.' && (++pos_, digits() == 0))
			return fail("bad number");
		if (pos_ < t_.size() && (t_[pos_] == 'e' || t_[pos_] == 'E')) {
			++pos_;
			if (pos_ < t_.size() && (t_[pos_] == '+' || t_[pos_] == '-'))
				++pos_;
			if (digits() == 0)
				return fail("bad number");
		}
		out.type = json_value::kind::number;
		out.text = std::string(t_.substr(start, pos_ - start));
		return true;
	}

	std::string_view t_;
	size_t pos_ = 0;
	std::string why_;
};

} // namespace

setup_result<json_value> parse_json(std::string_view text)
{
	parser p(text);
	json_value v;
	if (p.parse(v, 0) && p.at_end())
		return v;
	return setup_error{EINVAL, p.error()};
}

} // namespace tcmud::control
