// SPDX-License-Identifier: GPL-2.0-or-later
#include "rbd/rbd_config.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "tcmud/cfgstring_options.h"

namespace tcmud {
namespace {

// The cfgstring's syntax is wrong: EINVAL, and what is wrong.
setup_error malformed(std::string why)
{
	return setup_error{EINVAL, std::move(why)};
}

setup_result<void> check_name(std::string_view what, std::string_view name)
{
	if (name.empty())
		return malformed("no " + std::string(what) + " name given (expected POOL/IMAGE)");
	for (char c : name) {
		if (c == '/' || c == '@' || static_cast<unsigned char>(c) < 0x20)
			return malformed(std::string(what) + " name '" + std::string(name) +
			       "' contains '" + (c == '/' || c == '@' ? std::string(1, c) : "a control character") +
			       "' (expected POOL/IMAGE; snapshots are not served)");
	}
	return {};
}

setup_result<void> parse_option(std::string_view option, rbd_config *out, unsigned *seen)
{
	size_t eq = option.find('=');
	if (eq == std::string_view::npos)
		return malformed("option '" + std::string(option) +
				 "' has no value (expected name=value)");
	std::string_view name = option.substr(0, eq);
	std::string_view value = option.substr(eq + 1);
	if (value.empty())
		return malformed("option '" + std::string(name) + "' has an empty value");
	unsigned bit = 0;
	if (name == "conf") {
		bit = 1;
		if (value[0] != '/')
			return malformed("conf path '" + std::string(value) + "' is not absolute");
		out->conf = std::string(value);
	} else if (name == "id") {
		bit = 2;
		if (value.substr(0, 7) == "client.")
			return malformed("id '" + std::string(value) +
			       "': give the user without 'client.' (id=" +
			       std::string(value.substr(7)) + ")");
		out->id = std::string(value);
	} else if (name == "osd_op_timeout") {
		bit = 4;
		unsigned secs = 0;
		auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), secs);
		if (ec != std::errc() || end != value.data() + value.size() || secs == 0 ||
		    secs > 3600)
			return malformed("osd_op_timeout '" + std::string(value) +
			       "' is not a number of seconds between 1 and 3600");
		out->osd_op_timeout = secs;
	} else {
		return malformed("unknown option '" + std::string(name) +
		       "' (known: conf, id, osd_op_timeout)");
	}
	if (*seen & bit)
		return malformed("option '" + std::string(name) + "' given twice");
	*seen |= bit;
	return {};
}

} // namespace

setup_result<rbd_config> parse_rbd_config(std::string_view cfgstring)
{
	rbd_config parsed;
	std::string_view target = cfgstring.substr(0, cfgstring.find(';'));
	size_t slash = target.find('/');
	if (slash == std::string_view::npos)
		return malformed("'" + std::string(target) + "' is not POOL/IMAGE");
	if (auto pool = check_name("pool", target.substr(0, slash)); !pool)
		return pool.error();
	if (auto image = check_name("image", target.substr(slash + 1)); !image)
		return image.error();
	parsed.pool = std::string(target.substr(0, slash));
	parsed.image = std::string(target.substr(slash + 1));

	unsigned seen = 0;
	auto options = for_each_cfgstring_option(cfgstring, [&](std::string_view option) {
		return parse_option(option, &parsed, &seen);
	});
	if (!options)
		return options.error();
	return parsed;
}

setup_result<void> check_rbd_config(std::string_view cfgstring)
{
	auto cfg = parse_rbd_config(cfgstring);
	if (!cfg)
		return cfg.error();
	// setup_error{errno, ...} reads errno before the message is built.
	if (!cfg->conf.empty() && access(cfg->conf.c_str(), R_OK) < 0)
		return setup_error{errno, "conf " + cfg->conf};
	return {};
}

} // namespace tcmud
