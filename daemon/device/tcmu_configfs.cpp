// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/tcmu_configfs.h"

#include <cerrno>
#include <limits>

#include "device/sysfs_file.h"
#include "device/uio_name.h"

namespace tcmud {

namespace {

constexpr std::string_view serial_label = "T10 VPD Unit Serial Number: ";

} // namespace

tcmu_configfs::tcmu_configfs(const device_roots &roots, uint32_t hba, std::string_view device)
	: dir_(roots.configfs / "target" / "core" / ("user_" + std::to_string(hba)) /
	       std::string(device)),
	  valid_(is_safe_path_component(device))
{
}

// `sub` is ours ("attrib", "statistics/scsi_dev", or empty); `name` and the
// device's own name may come from outside and must not climb out of dir_.
setup_result<std::filesystem::path> tcmu_configfs::path_of(std::string_view sub,
							  std::string_view name) const
{
	if (!valid_)
		return setup_error{EINVAL, dir_.string() + ": the device name is not one path component"};
	if (!is_safe_path_component(name))
		return setup_error{EINVAL, "'" + std::string(name) + "' under " + dir_.string() +
						   " is not one path component"};
	return sub.empty() ? dir_ / std::string(name) : dir_ / std::string(sub) / std::string(name);
}

setup_result<std::string> tcmu_configfs::read_in(std::string_view sub, std::string_view name) const
{
	auto p = path_of(sub, name);
	if (!p)
		return p.error();
	return read_attribute(*p);
}

setup_result<uint32_t> tcmu_configfs::read_u32(std::string_view sub, std::string_view name) const
{
	auto p = path_of(sub, name);
	if (!p)
		return p.error();
	auto v = read_u64_attribute(*p);
	if (!v)
		return v.error();
	if (*v > std::numeric_limits<uint32_t>::max())
		return setup_error{ERANGE, p->string() + " holds " + std::to_string(*v) +
						   ", more than 32 bits"};
	return uint32_t(*v);
}

setup_result<void> tcmu_configfs::write_action(std::string_view name, std::string_view value) const
{
	auto p = path_of("action", name);
	if (!p)
		return p.error();
	return write_attribute(*p, value);
}

setup_result<std::string> tcmu_configfs::read_attrib(std::string_view name) const
{
	return read_in("attrib", name);
}

setup_result<uint64_t> tcmu_configfs::read_attrib_u64(std::string_view name) const
{
	auto p = path_of("attrib", name);
	if (!p)
		return p.error();
	return read_u64_attribute(*p);
}

setup_result<uint32_t> tcmu_configfs::hw_block_size() const
{
	return read_u32("attrib", "hw_block_size");
}

setup_result<uint64_t> tcmu_configfs::dev_size() const
{
	return read_attrib_u64("dev_size");
}

setup_result<bool> tcmu_configfs::emulate_write_cache() const
{
	auto v = read_attrib_u64("emulate_write_cache");
	if (!v)
		return v.error();
	return *v != 0;
}

setup_result<bool> tcmu_configfs::enabled() const
{
	auto p = path_of("", "enable");
	if (!p)
		return p.error();
	auto v = read_u64_attribute(*p);
	if (!v)
		return v.error();
	return *v != 0;
}

setup_result<uint32_t> tcmu_configfs::device_index() const
{
	return read_u32("statistics/scsi_dev", "indx");
}

setup_result<std::string> tcmu_configfs::info() const
{
	return read_in("", "info");
}

setup_result<std::string> tcmu_configfs::read_wwn(std::string_view name) const
{
	return read_in("wwn", name);
}

setup_result<std::string> tcmu_configfs::unit_serial() const
{
	auto text = read_wwn("vpd_unit_serial");
	if (!text)
		return text;
	std::string_view s = *text;
	if (s.starts_with(serial_label))
		s.remove_prefix(serial_label.size());
	return std::string(s);
}

setup_result<void> tcmu_configfs::block_dev() const
{
	return write_action("block_dev", "1");
}

setup_result<void> tcmu_configfs::unblock_dev() const
{
	return write_action("block_dev", "0");
}

setup_result<void> tcmu_configfs::reset_ring(ring_reset_level level) const
{
	return write_action("reset_ring", std::to_string(unsigned(level)));
}

} // namespace tcmud
