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

setup_result<void> read_map0(const fs::path &dir, uio_device_info &info)
{
	fs::path map0 = dir / "maps" / "map0";
	auto size = read_u64_attribute(map0 / "size");
	if (!size)
		return size.error();
	auto offset = read_u64_attribute(map0 / "offset");
	if (!offset)
		return offset.error();
	// A mapping of nothing is not a ring.
	if (*size == 0)
		return setup_error{EINVAL, (map0 / "size").string() + " is 0: no ring to map"};
	info.map_size = *size;
	info.map_offset = *offset;
	return {};
}

// The version and map0 of the uio device in `dir`, known to be `uio`.
setup_result<uio_device_info> read_rest(const fs::path &dir, std::string_view uio, uint32_t minor,
					tcmu_uio_name name)
{
	uio_device_info info;
	info.uio = std::string(uio);
	info.minor = minor;
	info.name = std::move(name);
	auto version = read_attribute(dir / "version");
	if (!version)
		return version.error();
	info.version = std::move(*version);
	if (auto map0 = read_map0(dir, info); !map0)
		return map0.error();
	return info;
}

} // namespace

setup_result<uio_device_info> read_uio_device(const device_roots &roots, std::string_view uio)
{
	fs::path dir = roots.sysfs / "class" / "uio" / std::string(uio);
	auto minor = uio_minor(uio);
	if (!minor)
		return setup_error{ENODEV, dir.string() + ": not named uioN"};
	auto text = read_attribute(dir / "name");
	if (!text)
		return text.error();
	auto name = parse_uio_name(*text);
	if (!name)
		return setup_error{ENODEV, dir.string() + " is '" + *text + "', not a tcm-user device"};
	return read_rest(dir, uio, *minor, std::move(*name));
}

setup_result<uio_device_info> find_queue_uio_device(const device_roots &roots,
						    const uio_device_info &dev, uint32_t queue)
{
	const fs::path class_dir = roots.sysfs / "class" / "uio";
	std::error_code ec;
	fs::directory_iterator it(class_dir, ec);
	for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
		std::string uio = it->path().filename().string();
		auto minor = uio_minor(uio);
		if (!minor)
			continue; // not a uio device
		auto text = read_attribute(it->path() / "name");
		if (!text)
			continue; // one going away
		auto qn = parse_queue_uio_name(*text);
		if (!qn || qn->hba != dev.name.hba || qn->device != dev.name.device ||
		    qn->queue != queue)
			continue;
		return read_rest(it->path(), uio, *minor, dev.name);
	}
	return setup_error{ENOENT, "no uio device in " + class_dir.string() + " is named tcmu-queue/" +
					   std::to_string(dev.name.hba) + "/" + dev.name.device + "/" +
					   std::to_string(queue)};
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
		auto info = read_uio_device(roots, uio);
		if (info)
			found.push_back(std::move(*info));
		else if (info.error().error != ENODEV && skipped)
			skipped->push_back({uio, info.error()});
	}
	std::sort(found.begin(), found.end(),
		  [](const auto &a, const auto &b) { return a.minor < b.minor; });
	return found;
}

} // namespace tcmud
