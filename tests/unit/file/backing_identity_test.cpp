// SPDX-License-Identifier: GPL-2.0-or-later
// The identity record: written at creation, compared at a takeover, and a
// file renamed over the image refused then.
#include <sys/sysmacros.h>

#include "file/backing_identity.h"
#include "file_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

// A device's configuration as core hands it over, with its record in
// dir/backing/ (a directory open() must create).
backstore_config config_with_record(const temp_dir &dir, const std::string &cfgstring,
				    bool taking_over)
{
	backstore_config cfg = make_config(cfgstring, 1 << 20);
	cfg.identity_record = dir / "backing/user_1-disk0";
	cfg.taking_over = taking_over;
	return cfg;
}

struct stat stat_of(const std::string &path)
{
	struct stat st;
	REQUIRE(stat(path.c_str(), &st) == 0);
	return st;
}

backing_identity recorded(const backstore_config &cfg)
{
	auto id = read_backing_identity(cfg.identity_record);
	INFO((id ? "" : id.error().what()));
	REQUIRE(id);
	return *id;
}

std::string this_boot()
{
	auto boot = current_boot_id();
	REQUIRE(boot);
	return *boot;
}

} // namespace

TEST_CASE("a new device records its backing file's device and inode", "[file][identity]")
{
	temp_dir dir;
	const std::string img = dir / "img";
	write_file(img, 1 << 20, 'a');
	auto cfg = config_with_record(dir, img, false);
	auto store = file_backstore::open(cfg);
	REQUIRE(store);
	backing_identity id = recorded(cfg);
	CHECK(id.boot_id == this_boot());
	CHECK(id.dev == stat_of(img).st_dev);
	CHECK(id.ino == stat_of(img).st_ino);
	CHECK(id.path == img);
	// Only root may read which files the devices are.
	CHECK((stat_of(dir / "backing").st_mode & 07777) == 0700);
	CHECK((stat_of(cfg.identity_record).st_mode & 07777) == 0600);
	// The temporary file was renamed, not left behind.
	CHECK(access((cfg.identity_record + ".tmp").c_str(), F_OK) < 0);
}

TEST_CASE("a device taken over opens the file it was created with", "[file][identity]")
{
	temp_dir dir;
	const std::string img = dir / "img";
	write_file(img, 1 << 20, 'a');
	REQUIRE(file_backstore::open(config_with_record(dir, img, false)));
	log_capture log;
	auto again = file_backstore::open(config_with_record(dir, img, true));
	INFO((again ? "" : again.error().what()));
	CHECK(again);
	CHECK_FALSE(log.contains("no record"));
}

TEST_CASE("a device taken over refuses a file renamed over its backing file",
	  "[file][identity]")
{
	temp_dir dir;
	const std::string img = dir / "img";
	write_file(img, 1 << 20, 'a');
	auto created = config_with_record(dir, img + ";extend=1", false);
	REQUIRE(file_backstore::open(created));
	const struct stat then = stat_of(img);

	// Another file takes the image's name: a new inode. Smaller, so an
	// open that went ahead would grow it (extend=1).
	write_file(dir / "other", 4096, 'b');
	REQUIRE(rename((dir / "other").c_str(), img.c_str()) == 0);
	const struct stat now = stat_of(img);
	REQUIRE(now.st_ino != then.st_ino);

	auto refused = file_backstore::open(config_with_record(dir, img + ";extend=1", true));
	REQUIRE_FALSE(refused);
	CHECK(refused.error().error == ESTALE);
	const std::string dev = std::to_string(major(then.st_dev)) + ":" +
				std::to_string(minor(then.st_dev));
	CHECK(refused.error().message ==
	      img + " is not the file this device was created with (device " + dev + " inode " +
		      std::to_string(then.st_ino) + " then, device " + dev + " inode " +
		      std::to_string(now.st_ino) + " now)");
	CHECK(refused.error().hint == "if the change is intended, remove " +
					      created.identity_record + " and re-enable the device");
	CHECK(stat_of(img).st_size == 4096); // not extended
	// The record still names the old file: refused again until removed.
	CHECK(recorded(created).ino == then.st_ino);

	// Removing the record accepts the change.
	REQUIRE(unlink(created.identity_record.c_str()) == 0);
	log_capture log;
	auto accepted = file_backstore::open(config_with_record(dir, img + ";extend=1", true));
	INFO((accepted ? "" : accepted.error().what()));
	CHECK(accepted);
	CHECK(log.contains("no record of " + img + " from this boot to compare it with"));
	CHECK(recorded(created).ino == now.st_ino);
}

TEST_CASE("a record from another boot is not compared, and is rewritten", "[file][identity]")
{
	temp_dir dir;
	const std::string img = dir / "img";
	write_file(img, 1 << 20, 'a');
	auto cfg = config_with_record(dir, img, true);
	// Another boot, another file: device numbers need not survive a reboot.
	backing_identity old{"00000000-0000-0000-0000-000000000000", 1, 2, img};
	REQUIRE(write_backing_identity(cfg.identity_record, old));
	log_capture log;
	auto store = file_backstore::open(cfg);
	INFO((store ? "" : store.error().what()));
	REQUIRE(store);
	CHECK(log.contains("it is from another boot"));
	backing_identity id = recorded(cfg);
	CHECK(id.boot_id == this_boot());
	CHECK(id.ino == stat_of(img).st_ino);
}

TEST_CASE("a record of another path is not compared, and is rewritten", "[file][identity]")
{
	temp_dir dir;
	const std::string img = dir / "img";
	write_file(img, 1 << 20, 'a');
	auto cfg = config_with_record(dir, img, true);
	REQUIRE(write_backing_identity(cfg.identity_record,
				       {this_boot(), 1, 2, dir / "elsewhere.img"}));
	auto store = file_backstore::open(cfg);
	REQUIRE(store);
	CHECK(recorded(cfg).path == img);
	CHECK(recorded(cfg).ino == stat_of(img).st_ino);
}

TEST_CASE("a record that cannot be written is a warning, not a refusal", "[file][identity]")
{
	temp_file file(1 << 20);
	backstore_config cfg = make_config(file.path(), 1 << 20);
	cfg.identity_record = "/nonexistent/tcmud/backing/user_1-disk0";
	log_capture log;
	auto store = file_backstore::open(cfg);
	REQUIRE(store);
	CHECK(log.contains("cannot record which file " + file.path() + " is"));
}

TEST_CASE("no record is kept where core names none", "[file][identity]")
{
	temp_dir dir;
	write_file(dir / "img", 1 << 20, 'a');
	backstore_config cfg = make_config(dir / "img", 1 << 20);
	cfg.taking_over = true;
	REQUIRE(file_backstore::open(cfg));
	CHECK(access((dir / "backing").c_str(), F_OK) < 0);
}

TEST_CASE("a record reads back as written, and a malformed one is refused", "[file][identity]")
{
	temp_dir dir;
	const std::string record = dir / "backing/r";
	backing_identity id{"5a0c5d9e-1111-2222-3333-444455556666", makedev(253, 7), 1234567,
			    "/srv/a b.img"};
	REQUIRE(write_backing_identity(record, id));
	auto back = read_backing_identity(record);
	REQUIRE(back);
	CHECK(*back == id);
	write_file(record, 10, 'x');
	auto bad = read_backing_identity(record);
	REQUIRE_FALSE(bad);
	CHECK(bad.error().error == EINVAL);
	CHECK_FALSE(write_backing_identity(record, {"b", 1, 2, "/a\nino=3"}));
}
