// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/backing_identity.h"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <optional>
#include <string_view>

#include "file/nofollow_open.h"
#include "log/log.h"
#include "tcmud/write_all.h"

namespace tcmud {
namespace {

// A record is a few lines; anything longer is not one of ours.
constexpr size_t max_record_bytes = 16 * 1024;

struct split_path {
	std::string dir;
	std::string name;
};

// "/a/b/c" -> "/a/b", "c"; EINVAL unless absolute with a last component.
setup_result<split_path> split(const std::string &path)
{
	size_t slash = path.rfind('/');
	if (path.empty() || path[0] != '/' || slash + 1 == path.size())
		return setup_error{EINVAL, "'" + path + "' is not an absolute file name"};
	return split_path{slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// The directory, created (0700: the records say which files the devices
// are) if it is missing; its parent must exist.
setup_result<unique_fd> open_record_dir(const std::string &dir)
{
	auto fd = open_nofollow(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd || fd.error().error != ENOENT)
		return fd;
	auto place = split(dir);
	if (!place)
		return place.error();
	auto parent = open_nofollow(place->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!parent)
		return parent.error();
	if (mkdirat(parent->get(), place->name.c_str(), 0700) < 0 && errno != EEXIST)
		return setup_error{errno, "cannot create " + dir};
	return open_nofollow(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}


// The whole of a small file, or why not.
setup_result<std::string> read_small_file(const std::string &path)
{
	auto fd = open_nofollow(path, O_RDONLY | O_CLOEXEC);
	if (!fd)
		return fd.error();
	std::string text;
	char buf[4096];
	for (;;) {
		ssize_t n = read(fd->get(), buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return setup_error{errno, "cannot read " + path};
		if (n == 0)
			return text;
		text.append(buf, static_cast<size_t>(n));
		if (text.size() > max_record_bytes)
			return setup_error{EINVAL, path + " is too long to be a record"};
	}
}

std::optional<uint64_t> parse_number(std::string_view text)
{
	uint64_t value = 0;
	auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
	if (ec != std::errc() || end != text.data() + text.size() || text.empty())
		return std::nullopt;
	return value;
}

// "major:minor", as ls -l and /proc/self/mountinfo show a device.
std::string device_text(uint64_t dev)
{
	return std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
}

std::optional<uint64_t> parse_device(std::string_view text)
{
	size_t colon = text.find(':');
	if (colon == std::string_view::npos)
		return std::nullopt;
	auto maj = parse_number(text.substr(0, colon));
	auto min = parse_number(text.substr(colon + 1));
	if (!maj || !min || *maj > UINT32_MAX || *min > UINT32_MAX)
		return std::nullopt;
	return makedev(static_cast<unsigned>(*maj), static_cast<unsigned>(*min));
}

std::string format_record(const backing_identity &id)
{
	return "# tcmud: the backing file this device was created with (docs/admin.md)\n"
	       "boot_id=" + id.boot_id + "\n" +
	       "dev=" + device_text(id.dev) + "\n" +
	       "ino=" + std::to_string(id.ino) + "\n" +
	       "path=" + id.path + "\n";
}

} // namespace

setup_result<std::string> current_boot_id()
{
	const std::string path = "/proc/sys/kernel/random/boot_id";
	auto text = read_small_file(path);
	if (!text)
		return text.error();
	std::string id = std::move(*text);
	while (!id.empty() && id.back() == '\n')
		id.pop_back();
	if (id.empty())
		return setup_error{EINVAL, path + " is empty"};
	return id;
}

setup_result<backing_identity> read_backing_identity(const std::string &record)
{
	auto text = read_small_file(record);
	if (!text)
		return text.error();
	backing_identity id;
	bool have_dev = false, have_ino = false;
	std::string_view rest = *text;
	while (!rest.empty()) {
		size_t nl = rest.find('\n');
		std::string_view line = rest.substr(0, nl);
		rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
		if (line.empty() || line[0] == '#')
			continue;
		size_t eq = line.find('=');
		std::string_view key = line.substr(0, eq);
		std::string_view value = eq == std::string_view::npos ? "" : line.substr(eq + 1);
		if (key == "boot_id") {
			id.boot_id = value;
		} else if (key == "path") {
			id.path = value;
		} else if (key == "dev") {
			auto dev = parse_device(value);
			have_dev = dev.has_value();
			id.dev = dev.value_or(0);
		} else if (key == "ino") {
			auto ino = parse_number(value);
			have_ino = ino.has_value();
			id.ino = ino.value_or(0);
		}
	}
	if (id.boot_id.empty() || id.path.empty() || !have_dev || !have_ino)
		return setup_error{EINVAL, record + " is not a record of a backing file"};
	return id;
}

setup_result<void> write_backing_identity(const std::string &record, const backing_identity &id)
{
	// One field a line: a newline inside one would forge the next.
	if (id.path.find('\n') != std::string::npos || id.boot_id.find('\n') != std::string::npos)
		return setup_error{EINVAL, "a path with a newline cannot be recorded"};
	auto place = split(record);
	if (!place)
		return place.error();
	auto dir = open_record_dir(place->dir);
	if (!dir)
		return dir.error();
	const int dfd = dir->get();
	const std::string tmp = place->name + ".tmp";
	const std::string tmp_path = place->dir + "/" + tmp;
	// A temporary file a crash left behind; the directory is tcmud's own.
	if (unlinkat(dfd, tmp.c_str(), 0) < 0 && errno != ENOENT)
		return setup_error{errno, "cannot remove " + tmp_path};
	unique_fd fd(openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600));
	if (!fd)
		return setup_error{errno, "cannot create " + tmp_path};
	if (!write_all(fd.get(), format_record(id)) || fsync(fd.get()) < 0) {
		setup_error e{errno, "cannot write " + tmp_path};
		unlinkat(dfd, tmp.c_str(), 0);
		return e;
	}
	fd.reset();
	if (renameat(dfd, tmp.c_str(), dfd, place->name.c_str()) < 0) {
		setup_error e{errno, "cannot rename " + tmp_path + " to " + record};
		unlinkat(dfd, tmp.c_str(), 0);
		return e;
	}
	// The rename itself durable: after a crash, the old record would
	// refuse the file just recorded.
	if (fsync(dfd) < 0)
		return setup_error{errno, "cannot fsync " + place->dir};
	return {};
}

namespace {

void warn_unrecorded(const backstore_config &cfg, const std::string &path,
		     const setup_error &why)
{
	log_warn(cfg.log_prefix, "cannot record which file %s is, so a restart cannot check it: %s",
		 path.c_str(), why.what().c_str());
}

// The refusal: what changed, and how to accept it if that was intended.
setup_error changed_file(const std::string &record, const backing_identity &then,
			 const backing_identity &now)
{
	return setup_error{ESTALE,
			   now.path + " is not the file this device was created with (device " +
				   device_text(then.dev) + " inode " + std::to_string(then.ino) +
				   " then, device " + device_text(now.dev) + " inode " +
				   std::to_string(now.ino) + " now)",
			   "if the change is intended, remove " + record + " and re-enable the device"};
}

} // namespace

setup_result<void> reconcile_backing_identity(const backstore_config &cfg,
					      const std::string &path, const struct stat &st)
{
	const std::string &record = cfg.identity_record;
	if (record.empty())
		return {};
	auto boot = current_boot_id();
	if (!boot) {
		warn_unrecorded(cfg, path, boot.error());
		return {};
	}
	const backing_identity now{*boot, static_cast<uint64_t>(st.st_dev),
				   static_cast<uint64_t>(st.st_ino), path};
	if (cfg.taking_over) {
		auto then = read_backing_identity(record);
		std::string why; // why there is nothing to compare with
		if (!then)
			why = then.error().error == ENOENT ? "there is none at " + record
							   : then.error().what();
		else if (then->boot_id != now.boot_id)
			why = "it is from another boot";
		else if (then->path != now.path)
			why = "it is of " + then->path;
		else if (then->dev == now.dev && then->ino == now.ino)
			return {};
		else
			return changed_file(record, *then, now);
		log_info(cfg.log_prefix, "no record of %s from this boot to compare it with (%s); "
			 "recording it now", path.c_str(), why.c_str());
	}
	if (auto written = write_backing_identity(record, now); !written)
		warn_unrecorded(cfg, path, written.error());
	return {};
}

} // namespace tcmud
