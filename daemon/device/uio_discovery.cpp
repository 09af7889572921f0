// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/uio_discovery.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <optional>
#include <system_error>

#include "device/sysfs_file.h"

namespace tcmud {

namespace {

namespace fs = std::filesystem;

std::optional<uint32_t> uio_minor(std::string_view uio)
{
	if (!uio.starts_with("uio"))
		return std::nullopt;
	std::string_view digits = uio.substr(3);
	uint32_t v = 0;
	auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 10);
	if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
		return std::nullopt;
	return v;
}

int read_map0(const fs::path &dir, uio_device_info &out)
{
	fs::path map0 = dir / "maps" / "map0";
	if (int r = read_u64_attribute(map0 / "size", out.map_size); r < 0)
		return r;
	if (int r = read_u64_attribute(map0 / "offset", out.map_offset); r < 0)
		return r;
	// A mapping of nothing is not a ring.
	if (out.map_size == 0)
		return -EINVAL;
	return 0;
}

} // namespace

int read_uio_device(const device_roots &roots, std::string_view uio, uio_device_info &out)
{
	auto minor = uio_minor(uio);
	if (!minor)
		return -ENODEV;
	fs::path dir = roots.sysfs / "class" / "uio" / std::string(uio);

	std::string text;
	if (int r = read_attribute(dir / "name", text); r < 0)
		return r;
	auto name = parse_uio_name(text);
	if (!name)
		return -ENODEV;

	uio_device_info info;
	info.uio = std::string(uio);
	info.minor = *minor;
	info.name = std::move(*name);
	if (int r = read_attribute(dir / "version", info.version); r < 0)
		return r;
	if (int r = read_map0(dir, info); r < 0)
		return r;
	out = std::move(info);
	return 0;
}

int find_queue_uio_device(const device_roots &roots, const uio_device_info &dev,
			  uint32_t queue, uio_device_info &out)
{
	std::error_code ec;
	fs::directory_iterator it(roots.sysfs / "class" / "uio", ec);
	for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
		std::string uio = it->path().filename().string();
		auto minor = uio_minor(uio);
		std::string text;
		if (!minor || read_attribute(it->path() / "name", text) < 0)
			continue; // not a uio device, or one going away
		auto qn = parse_queue_uio_name(text);
		if (!qn || qn->hba != dev.name.hba || qn->device != dev.name.device ||
		    qn->queue != queue)
			continue;
		uio_device_info info;
		info.uio = uio;
		info.minor = *minor;
		info.name = dev.name;
		if (int r = read_attribute(it->path() / "version", info.version); r < 0)
			return r;
		if (int r = read_map0(it->path(), info); r < 0)
			return r;
		out = std::move(info);
		return 0;
	}
	return -ENOENT;
}

std::vector<uio_device_info> discover_tcmu_devices(const device_roots &roots,
						   std::vector<discovery_skip> *skipped)
{
	std::vector<uio_device_info> found;
	std::error_code ec;
	fs::directory_iterator it(roots.sysfs / "class" / "uio", ec);
	// No uio class directory: no uio module loaded, so no devices.
	for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
		std::string uio = it->path().filename().string();
		uio_device_info info;
		int r = read_uio_device(roots, uio, info);
		if (r == 0)
			found.push_back(std::move(info));
		else if (r != -ENODEV && skipped)
			skipped->push_back({uio, r});
	}
	std::sort(found.begin(), found.end(),
		  [](const auto &a, const auto &b) { return a.minor < b.minor; });
	return found;
}

} // namespace tcmud
