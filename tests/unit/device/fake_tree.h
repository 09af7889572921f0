// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A throw-away sysfs/configfs//dev tree in a temporary directory, shaped like
// the kernel's, so device code is tested without uio or target_core_user.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "device/device_roots.h"

namespace tcmud::test {

namespace fs = std::filesystem;

class fake_tree {
public:
	fake_tree()
	{
		std::string tmpl = (fs::temp_directory_path() / "tcmud-device-XXXXXX").string();
		REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
		root_ = tmpl;
		roots.sysfs = root_ / "sys";
		roots.configfs = root_ / "config";
		roots.dev = root_ / "dev";
		fs::create_directories(roots.dev);
	}
	~fake_tree()
	{
		std::error_code ec;
		fs::remove_all(root_, ec);
	}
	fake_tree(const fake_tree &) = delete;
	fake_tree &operator=(const fake_tree &) = delete;

	static void write(const fs::path &p, const std::string &content)
	{
		fs::create_directories(p.parent_path());
		std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
	}

	static std::string read(const fs::path &p)
	{
		std::ifstream in(p, std::ios::binary);
		return std::string(std::istreambuf_iterator<char>(in), {});
	}

	fs::path uio_dir(const std::string &uio) const
	{
		return roots.sysfs / "class" / "uio" / uio;
	}

	// A uio device as uio.c shows it: name, version, maps/map0/{size,offset}.
	void add_uio(const std::string &uio, const std::string &name,
		     const std::string &size = "0x0000000000802000\n")
	{
		write(uio_dir(uio) / "name", name + "\n");
		write(uio_dir(uio) / "version", "2\n");
		write(uio_dir(uio) / "maps" / "map0" / "size", size);
		write(uio_dir(uio) / "maps" / "map0" / "offset", "0x0\n");
	}

	fs::path configfs_dir(const std::string &hba_dev) const
	{
		return roots.configfs / "target" / "core" / hba_dev;
	}

	device_roots roots;

private:
	fs::path root_;
};

} // namespace tcmud::test
