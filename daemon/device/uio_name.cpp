// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/uio_name.h"

#include <charconv>

namespace tcmud {

namespace {

constexpr std::string_view prefix = "tcm-user/";

// Splits off everything up to the next '/', consuming the '/'.
std::string_view take_component(std::string_view &rest)
{
	auto slash = rest.find('/');
	std::string_view part = rest.substr(0, slash);
	rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
	return part;
}

std::optional<uint32_t> parse_hba(std::string_view s)
{
	uint32_t v = 0;
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
	if (s.empty() || ec != std::errc() || end != s.data() + s.size())
		return std::nullopt;
	return v;
}

} // namespace

std::optional<tcmu_queue_uio_name> parse_queue_uio_name(std::string_view name)
{
	constexpr std::string_view queue_prefix = "tcmu-queue/";
	if (!name.starts_with(queue_prefix))
		return std::nullopt;
	std::string_view rest = name.substr(queue_prefix.size());
	auto hba = parse_hba(take_component(rest));
	std::string_view device = take_component(rest);
	// The last component is the queue: no further '/'.
	if (!hba || !is_safe_path_component(device) || rest.find('/') != std::string_view::npos)
		return std::nullopt;
	auto queue = parse_hba(rest);
	if (!queue || *queue == 0)
		return std::nullopt;
	return tcmu_queue_uio_name{*hba, std::string(device), queue.value_or(0)};
}

bool is_safe_path_component(std::string_view s)
{
	return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos &&
	       s.find('\0') == std::string_view::npos;
}

std::optional<tcmu_uio_name> parse_uio_name(std::string_view name)
{
	if (!name.starts_with(prefix))
		return std::nullopt;
	std::string_view rest = name.substr(prefix.size());

	auto hba = parse_hba(take_component(rest));
	bool has_config = rest.find('/') != std::string_view::npos;
	std::string_view device = take_component(rest);
	if (!hba || !is_safe_path_component(device))
		return std::nullopt;

	tcmu_uio_name out;
	out.hba = *hba;
	out.device = std::string(device);
	if (has_config) {
		out.subtype = std::string(take_component(rest));
		out.cfgstring = std::string(rest);
	}
	return out;
}

} // namespace tcmud
