// SPDX-License-Identifier: GPL-2.0-or-later
#include "device/alua_configfs.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <system_error>

#include "device/sysfs_file.h"
#include "device/uio_name.h"

namespace tcmud {

namespace fs = std::filesystem;

namespace {

struct member_port {
	std::string fabric, wwn, tpgt, lun;  // path components, checked
};

// "iSCSI/iqn.2003-01.org.x:gw/tpgt_1/lun_0": four components, each safe
// to join to a path (they are configfs names, but a daemon running as
// root does not climb out of configfs on the kernel's word alone).
std::optional<member_port> parse_member(std::string_view line)
{
	member_port m;
	std::string *parts[] = {&m.fabric, &m.wwn, &m.tpgt, &m.lun};
	for (std::size_t i = 0; i < 4; i++) {
		std::size_t slash = line.find('/');
		if ((slash == std::string_view::npos) != (i == 3))
			return std::nullopt;
		*parts[i] = std::string(line.substr(0, slash));
		if (!is_safe_path_component(*parts[i]))
			return std::nullopt;
		line = i == 3 ? std::string_view() : line.substr(slash + 1);
	}
	if (!m.tpgt.starts_with("tpgt_") || !m.lun.starts_with("lun_"))
		return std::nullopt;
	return m;
}

// The fabric's directory under target/: LIO names members by the fabric's
// name ("iSCSI"), configfs by its alias ("iscsi") where it has one.
fs::path fabric_dir(const device_roots &roots, const std::string &fabric)
{
	fs::path dir = roots.configfs / "target" / fabric;
	std::error_code ec;
	if (fs::is_directory(dir, ec))
		return dir;
	std::string lower = fabric;
	std::ranges::transform(lower, lower.begin(),
			       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
	return roots.configfs / "target" / lower;
}

setup_result<uint64_t> read_number(const fs::path &p) { return read_u64_attribute(p); }

uint8_t tpgs_of(std::string_view access_type)
{
	// Explicit transitions (SET TARGET PORT GROUPS) are not offered:
	// "Implicit and Explicit" is reported implicit. "None" is every
	// group active, which an initiator still reads through RTPG
	// (tcmu-runner reports it implicit too).
	if (access_type == "Explicit")
		return 0;
	return scsi::TPGS_IMPLICIT;
}

setup_result<scsi::target_port_group> read_group(const fs::path &dir, const device_roots &roots,
						 scsi::target_port_groups &out)
{
	scsi::target_port_group g;
	auto id = read_number(dir / "tg_pt_gp_id");
	if (!id)
		return id.error();
	if (*id > 0xffff)
		return setup_error{ERANGE, (dir / "tg_pt_gp_id").string() + " is over 65535"};
	g.id = static_cast<uint16_t>(*id);
	if (g.id == 0)
		return g;  // made, but no tg_pt_gp_id yet: not in use
	auto state = read_number(dir / "alua_access_state");
	if (!state)
		return state.error();
	g.state = static_cast<scsi::alua_state>(*state & 0x0f);
	static constexpr std::pair<const char *, uint8_t> support[] = {
		{"alua_support_transitioning", scsi::alua_support::TRANSITIONING},
		{"alua_support_offline", scsi::alua_support::OFFLINE},
		{"alua_support_lba_dependent", scsi::alua_support::LBA_DEPENDENT},
		{"alua_support_unavailable", scsi::alua_support::UNAVAILABLE},
		{"alua_support_standby", scsi::alua_support::STANDBY},
		{"alua_support_active_nonoptimized", scsi::alua_support::NON_OPTIMIZED},
		{"alua_support_active_optimized", scsi::alua_support::OPTIMIZED},
	};
	for (const auto &[file, bit] : support) {
		auto on = read_number(dir / file);
		if (!on)
			return on.error();
		if (*on)
			g.supported |= bit;
	}
	auto pref = read_number(dir / "preferred");
	if (!pref)
		return pref.error();
	g.preferred = *pref != 0;
	auto status = read_attribute(dir / "alua_access_status");
	if (!status)
		return status.error();
	g.status = *status == "Altered by Explicit STPG"	 ? 1
		   : *status == "Altered by Implicit ALUA" ? 2
							    : 0;
	auto type = read_attribute(dir / "alua_access_type");
	if (!type)
		return type.error();
	auto trans = read_number(dir / "implicit_trans_secs");
	if (!trans)
		return trans.error();

	auto members = read_attribute(dir / "members");
	if (!members)
		return members.error();
	// One line per member, each ended by a newline and a NUL (the
	// kernel counts the string's terminator into what it shows).
	std::string_view rest = *members;
	while (!rest.empty()) {
		std::size_t nl = rest.find_first_of(std::string_view("\n\0", 2));
		std::string_view line = rest.substr(0, nl);
		rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
		if (line.empty())
			continue;
		auto m = parse_member(line);
		if (!m)
			return setup_error{EINVAL, (dir / "members").string() + ": cannot read member '" +
							   std::string(line) + "'"};
		const fs::path tpg = fabric_dir(roots, m->fabric) / m->wwn / m->tpgt;
		auto rtpi = read_number(tpg / "lun" / m->lun / "statistics" / "scsi_port" / "indx");
		if (!rtpi)
			return rtpi.error();
		const uint16_t port = static_cast<uint16_t>(*rtpi);
		g.relative_ports.push_back(port);
		std::error_code ec;
		bool enabled = true;
		if (fs::exists(tpg / "enable", ec)) {
			auto en = read_number(tpg / "enable");
			if (!en)
				return en.error();
			enabled = *en != 0;
		}
		if (enabled && !out.have_local_port) {
			out.have_local_port = true;
			out.local_group = g.id;
			out.local_relative_port = port;
			out.tpgs = tpgs_of(*type);
			out.explicit_configured = type->find("Explicit") != std::string::npos;
			out.implicit_transition_secs = static_cast<uint8_t>(std::min<uint64_t>(*trans, 255));
		}
	}
	return g;
}

} // namespace

setup_result<scsi::target_port_groups> read_target_port_groups(const fs::path &device_dir,
							       const device_roots &roots)
{
	scsi::target_port_groups out;
	const fs::path alua = device_dir / "alua";
	std::error_code ec;
	std::vector<fs::path> dirs;
	for (fs::directory_iterator it(alua, ec), end; !ec && it != end; it.increment(ec))
		if (it->path().filename() != "default_tg_pt_gp")
			dirs.push_back(it->path());
	if (ec == std::errc::no_such_file_or_directory)
		return out;  // no alua/ (an old kernel, a test tree): no ALUA
	if (ec)
		return setup_error{ec.value(), "cannot list " + alua.string()};
	// Name order, as the groups appear in targetcli and tcmu-runner.
	std::ranges::sort(dirs);
	for (const fs::path &dir : dirs) {
		auto g = read_group(dir, roots, out);
		if (!g)
			return g.error();
		if (g->id == 0)
			continue;
		out.groups.push_back(std::move(*g));
	}
	if (out.groups.empty())
		out = {};
	return out;
}

} // namespace tcmud
