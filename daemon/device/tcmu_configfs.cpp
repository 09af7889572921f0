// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/tcmu_configfs.h"

#include <cerrno>
#include <limits>

#include "device/sysfs_file.h"
#include "device/uio_name.h"

namespace tcmud {

namespace {

constexpr std::string_view serial_label = "T10 VPD Unit Serial Number: ";

int read_u32(const tcmu_configfs &cfg, std::string_view name, uint32_t &out)
{
	uint64_t v = 0;
	if (int r = cfg.read_attrib_u64(name, v); r < 0)
		return r;
	if (v > std::numeric_limits<uint32_t>::max())
		return -ERANGE;
	out = uint32_t(v);
	return 0;
}

} // namespace

tcmu_configfs::tcmu_configfs(const device_roots &roots, uint32_t hba, std::string_view device)
	: dir_(roots.configfs / "target" / "core" / ("user_" + std::to_string(hba)) /
	       std::string(device)),
	  valid_(is_safe_path_component(device))
{
}

int tcmu_configfs::read_in(std::string_view sub, std::string_view name, std::string &out) const
{
	if (!valid_ || !is_safe_path_component(name))
		return -EINVAL;
	return read_attribute(dir_ / std::string(sub) / std::string(name), out);
}

int tcmu_configfs::read_attrib(std::string_view name, std::string &out) const
{
	return read_in("attrib", name, out);
}

int tcmu_configfs::read_attrib_u64(std::string_view name, uint64_t &out) const
{
	std::string text;
	if (int r = read_attrib(name, text); r < 0)
		return r;
	return parse_u64(text, out);
}

int tcmu_configfs::hw_block_size(uint32_t &out) const
{
	return read_u32(*this, "hw_block_size", out);
}

int tcmu_configfs::dev_size(uint64_t &out) const
{
	return read_attrib_u64("dev_size", out);
}

int tcmu_configfs::emulate_write_cache(bool &out) const
{
	uint64_t v = 0;
	if (int r = read_attrib_u64("emulate_write_cache", v); r < 0)
		return r;
	out = v != 0;
	return 0;
}

int tcmu_configfs::enabled(bool &out) const
{
	std::string text;
	uint64_t v = 0;
	if (!valid_)
		return -EINVAL;
	if (int r = read_attribute(dir_ / "enable", text); r < 0)
		return r;
	if (int r = parse_u64(text, v); r < 0)
		return r;
	out = v != 0;
	return 0;
}

int tcmu_configfs::device_index(uint32_t &out) const
{
	std::string text;
	uint64_t v = 0;
	if (!valid_)
		return -EINVAL;
	if (int r = read_attribute(dir_ / "statistics" / "scsi_dev" / "indx", text); r < 0)
		return r;
	if (int r = parse_u64(text, v); r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	out = static_cast<uint32_t>(v);
	return 0;
}

int tcmu_configfs::info(std::string &out) const
{
	if (!valid_)
		return -EINVAL;
	return read_attribute(dir_ / "info", out);
}

int tcmu_configfs::read_wwn(std::string_view name, std::string &out) const
{
	return read_in("wwn", name, out);
}

int tcmu_configfs::unit_serial(std::string &out) const
{
	std::string text;
	if (int r = read_wwn("vpd_unit_serial", text); r < 0)
		return r;
	std::string_view s = text;
	if (s.starts_with(serial_label))
		s.remove_prefix(serial_label.size());
	out = std::string(s);
	return 0;
}

int tcmu_configfs::block_dev() const
{
	if (!valid_)
		return -EINVAL;
	return write_attribute(dir_ / "action" / "block_dev", "1");
}

int tcmu_configfs::unblock_dev() const
{
	if (!valid_)
		return -EINVAL;
	return write_attribute(dir_ / "action" / "block_dev", "0");
}

int tcmu_configfs::reset_ring(ring_reset_level level) const
{
	if (!valid_)
		return -EINVAL;
	std::string value = std::to_string(unsigned(level));
	return write_attribute(dir_ / "action" / "reset_ring", value);
}

} // namespace tcmud
