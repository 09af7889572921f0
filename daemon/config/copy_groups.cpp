// SPDX-License-Identifier: GPL-2.0-or-later
#include "config/copy_groups.h"

#include <algorithm>
#include <cerrno>

#include "config/config_text.h"

namespace tcmud {
namespace {

// A configfs item name as targetcli creates them, and a group name:
// letters, digits and _ . - + @, not "." or "..". Nothing that the
// tcmud.conf syntax or this one gives a meaning to (quotes, '#', ':', ';',
// '/', white space).
bool valid_name(std::string_view s)
{
	if (s.empty() || s == "." || s == "..")
		return false;
	return std::all_of(s.begin(), s.end(), [](char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		       c == '_' || c == '.' || c == '-' || c == '+' || c == '@';
	});
}

// "NAME" or "user_N/NAME" with N a decimal number.
bool valid_member(std::string_view m)
{
	size_t slash = m.find('/');
	if (slash == std::string_view::npos)
		return valid_name(m);
	std::string_view hba = m.substr(0, slash);
	if (!hba.starts_with("user_") || hba.size() == 5 || hba.size() > 15)
		return false;
	if (!std::all_of(hba.begin() + 5, hba.end(), [](char c) { return c >= '0' && c <= '9'; }))
		return false;
	return valid_name(m.substr(slash + 1));
}

bool member_is(std::string_view member, uint32_t hba, std::string_view device)
{
	if (member == device)
		return true;
	std::string qualified = "user_" + std::to_string(hba) + "/";
	return member.starts_with(qualified) &&
	       member.substr(qualified.size()) == device;
}

} // namespace

bool copy_group_set::share_group(uint32_t hba_a, std::string_view device_a, uint32_t hba_b,
			      std::string_view device_b) const
{
	auto names = [](const copy_group &g, uint32_t hba, std::string_view dev) {
		return std::any_of(g.members.begin(), g.members.end(),
				   [&](const std::string &m) { return member_is(m, hba, dev); });
	};
	return std::any_of(groups.begin(), groups.end(), [&](const copy_group &g) {
		return names(g, hba_a, device_a) && names(g, hba_b, device_b);
	});
}

setup_result<copy_group_set> parse_copy_groups(std::string_view text)
{
	copy_group_set out;
	if (trim_blanks(text) == "none")
		return out;
	while (!text.empty()) {
		size_t semi = text.find(';');
		std::string_view one = trim_blanks(text.substr(0, semi));
		text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
		if (one.empty())
			continue;
		size_t colon = one.find(':');
		if (colon == std::string_view::npos)
			return setup_error{EINVAL, "\"" + std::string(one) +
							   "\" is not \"GROUP: DEVICE DEVICE ...\""};
		copy_group g;
		g.name = std::string(trim_blanks(one.substr(0, colon)));
		if (!valid_name(g.name))
			return setup_error{EINVAL, "\"" + g.name + "\" is not a group name"};
		if (std::any_of(out.groups.begin(), out.groups.end(),
				[&](const copy_group &o) { return o.name == g.name; }))
			return setup_error{EINVAL, "group \"" + g.name + "\" is given twice"};
		std::string_view members = one.substr(colon + 1);
		while (!(members = trim_blanks(members)).empty()) {
			size_t end = members.find_first_of(" \t");
			std::string_view m = members.substr(0, end);
			members = end == std::string_view::npos ? std::string_view{}
								: members.substr(end);
			if (!valid_member(m))
				return setup_error{EINVAL, "group \"" + g.name + "\": \"" +
								   std::string(m) +
								   "\" is neither a device name nor "
								   "user_N/NAME"};
			if (std::find(g.members.begin(), g.members.end(), m) == g.members.end())
				g.members.emplace_back(m);
		}
		if (g.members.size() < 2)
			return setup_error{EINVAL, "group \"" + g.name +
							   "\" names fewer than two devices"};
		out.groups.push_back(std::move(g));
	}
	if (out.groups.empty())
		return setup_error{EINVAL, "no group (write none for no copies between devices)"};
	return out;
}

std::string to_string(const copy_group_set &g)
{
	if (g.groups.empty())
		return "none";
	std::string s;
	for (const copy_group &one : g.groups) {
		if (!s.empty())
			s += "; ";
		s += one.name + ":";
		for (const std::string &m : one.members)
			s += " " + m;
	}
	return s;
}

} // namespace tcmud
