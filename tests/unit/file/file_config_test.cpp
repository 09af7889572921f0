// SPDX-License-Identifier: GPL-2.0-or-later
// The file handler's cfgstring syntax and check_config's reasons.
#include <linux/capability.h>
#include <sys/syscall.h>

#include <thread>

#include "file/file_config.h"
#include "file/file_handler.h"
#include "file_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

// Drops the capabilities that let root ignore file modes, for the calling
// thread only (capset affects one thread), so the permission check can be
// tested when the tests run as root.
void drop_dac_override_in_this_thread()
{
	__user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
	__user_cap_data_struct data[2]{};
	REQUIRE(syscall(SYS_capget, &header, data) == 0);
	for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER})
		data[cap / 32].effective &= ~(1u << (cap % 32));
	REQUIRE(syscall(SYS_capset, &header, data) == 0);
}

// "" when accepted, else the sentence a person is shown.
template <class T>
std::string reason(const setup_result<T> &r)
{
	return r ? std::string() : r.error().what();
}

std::string parse_reason(std::string_view cfgstring)
{
	return reason(parse_file_config(cfgstring));
}

} // namespace

TEST_CASE("a bare path parses with every option off", "[file][config]")
{
	auto parsed = parse_file_config("/var/lib/img");
	REQUIRE(parsed);
	const file_config &cfg = *parsed;
	CHECK(cfg.path == "/var/lib/img");
	CHECK_FALSE(cfg.direct);
	CHECK_FALSE(cfg.extend);
}

TEST_CASE("options after ';' set direct and extend", "[file][config]")
{
	auto cfg = parse_file_config("/img;direct=1;extend");
	REQUIRE(cfg);
	CHECK(cfg->path == "/img");
	CHECK(cfg->direct);
	CHECK(cfg->extend);
	auto off = parse_file_config("/img;direct=0");
	REQUIRE(off);
	CHECK_FALSE(off->direct);
}

TEST_CASE("block is a flag like the others, off by default", "[file][config]")
{
	CHECK_FALSE(parse_file_config("/dev/vdb")->block);
	CHECK(parse_file_config("/dev/vdb;block")->block);
	CHECK(parse_file_config("/dev/vdb;block=1;direct")->block);
	CHECK_FALSE(parse_file_config("/dev/vdb;block=0")->block);
	CHECK(parse_reason("/dev/vdb;block=2").find("takes 0 or 1") != std::string::npos);
}

TEST_CASE("extend with block is refused: a block device cannot grow", "[file][config]")
{
	auto parsed = parse_file_config("/dev/vdb;block;extend=1");
	REQUIRE_FALSE(parsed);
	CHECK(parsed.error().error == EINVAL);
	CHECK(parsed.error().message.find("cannot be combined with block") != std::string::npos);
	CHECK(parse_file_config("/dev/vdb;block;extend=0"));
}

TEST_CASE("an unknown option is refused and named", "[file][config]")
{
	auto parsed = parse_file_config("/img;sync=1");
	REQUIRE_FALSE(parsed);
	CHECK(parsed.error().error == EINVAL);
	CHECK(parsed.error().message.find("unknown option 'sync'") != std::string::npos);
}

TEST_CASE("tcmu-runner's tcmur_cmd_time_out is accepted from saved configurations",
	  "[file][config]")
{
	auto parsed = parse_file_config("/img;tcmur_cmd_time_out=30;direct=1");
	INFO((parsed ? "" : parsed.error().what()));
	REQUIRE(parsed);
	CHECK(parsed->direct);
	CHECK(parse_file_config("/img;tcmur_cmd_time_out=0"));
	// Only with seconds: anything else is still an unknown option.
	CHECK(parse_reason("/img;tcmur_cmd_time_out=soon").find("unknown option") !=
	      std::string::npos);
	CHECK(parse_reason("/img;tcmur_cmd_time_out=").find("empty value") != std::string::npos);
}

TEST_CASE("an option value other than 0 or 1 is refused", "[file][config]")
{
	CHECK(parse_reason("/img;direct=yes").find("takes 0 or 1") !=
	      std::string::npos);
	CHECK(parse_reason("/img;direct=").find("empty value") !=
	      std::string::npos);
}

TEST_CASE("a relative or empty path is refused", "[file][config]")
{
	CHECK(parse_reason("img").find("not absolute") != std::string::npos);
	CHECK(parse_reason("").find("no backing file") != std::string::npos);
	CHECK(parse_reason(";direct").find("no backing file") != std::string::npos);
}

TEST_CASE("a trailing ';' is refused as an empty option", "[file][config]")
{
	CHECK(parse_reason("/img;").find("empty option") != std::string::npos);
}

TEST_CASE("check_config accepts an existing writable regular file", "[file][config]")
{
	temp_file file(4096);
	CHECK(check_file_config(file.path()));
	CHECK(check_file_config(file.path() + ";direct=1;extend=1"));
}

TEST_CASE("check_config names a missing file", "[file][config]")
{
	std::string why = reason(check_file_config("/nonexistent/tcmud/img"));
	CHECK(why.find("/nonexistent/tcmud/img") != std::string::npos);
	CHECK(why.find("No such file or directory") != std::string::npos);
}

TEST_CASE("check_config refuses a directory", "[file][config]")
{
	CHECK(reason(check_file_config("/tmp")).find("Is a directory") != std::string::npos);
}

TEST_CASE("check_config refuses a character device", "[file][config]")
{
	CHECK(reason(check_file_config("/dev/null")).find("neither a regular file") !=
	      std::string::npos);
}

TEST_CASE("check_config reports a file this process may not write", "[file][config]")
{
	temp_file file(4096);
	REQUIRE(chmod(file.path().c_str(), 0400) == 0);
	std::string why;
	std::thread unprivileged([&] {
		drop_dac_override_in_this_thread();
		why = reason(check_file_config(file.path()));
	});
	unprivileged.join();
	CHECK(why.find("cannot be opened for reading and writing") != std::string::npos);
	CHECK(why.find("Permission denied") != std::string::npos);
}

TEST_CASE("check_config refuses a symbolic link as the backing file", "[file][config]")
{
	temp_file file(4096);
	temp_dir dir;
	REQUIRE(symlink(file.path().c_str(), (dir / "img").c_str()) == 0);
	auto checked = check_file_config(dir / "img");
	REQUIRE_FALSE(checked);
	CHECK(checked.error().error == ELOOP);
	std::string why = checked.error().what();
	CHECK(why.find(dir / "img is a symbolic link to " + file.path()) != std::string::npos);
	CHECK(why.find("tcmud does not follow symbolic links in backing paths") !=
	      std::string::npos);
	CHECK(why.find("configure the real path") != std::string::npos);
}

TEST_CASE("check_config refuses a symbolic link to a directory on the path", "[file][config]")
{
	temp_dir dir;
	REQUIRE(mkdir((dir / "real").c_str(), 0755) == 0);
	write_file(dir / "real/img", 4096, 'a');
	REQUIRE(check_file_config(dir / "real/img"));
	REQUIRE(symlink((dir / "real").c_str(), (dir / "lun").c_str()) == 0);
	auto checked = check_file_config(dir / "lun/img");
	REQUIRE_FALSE(checked);
	CHECK(checked.error().error == ELOOP);
	CHECK(checked.error().what().find(dir / "lun is a symbolic link") != std::string::npos);
}

TEST_CASE("check_config refuses a block device without block, accepts it with block",
	  "[file][config]")
{
	std::string why_not;
	auto loop = loop_device::attach(1 << 20, &why_not);
	if (!loop)
		TCMUD_SKIP(why_not);
	auto bare = check_file_config(loop->path());
	REQUIRE_FALSE(bare);
	CHECK(bare.error().error == EINVAL);
	CHECK(bare.error().what() == loop->path() + " is a block device: Invalid argument — "
						  "add ;block to the cfgstring to serve a block device");
	CHECK(reason(check_file_config(loop->path() + ";block")) == "");
	CHECK(reason(check_file_config(loop->path() + ";block;direct")) == "");
}

TEST_CASE("check_config refuses a regular file with block", "[file][config]")
{
	temp_file file(4096);
	auto checked = check_file_config(file.path() + ";block");
	REQUIRE_FALSE(checked);
	CHECK(checked.error().error == EINVAL);
	CHECK(checked.error().what() == file.path() + " is a regular file, not a block device: "
						      "Invalid argument — remove ;block to serve "
						      "a regular file");
}

TEST_CASE("check_config passes syntax errors through", "[file][config]")
{
	temp_file file(4096);
	CHECK(reason(check_file_config(file.path() + ";bogus")).find("unknown option") !=
	      std::string::npos);
}

TEST_CASE("the handler is registered as subtype file with its checks", "[file][config]")
{
	CHECK(file_handler.subtype == "file");
	CHECK(file_handler.config_desc.find("direct") != std::string_view::npos);
	CHECK(file_handler.config_desc.find("block=1") != std::string_view::npos);
	CHECK(file_handler.check_config == &check_file_config);
	temp_file file(8192);
	auto store = file_handler.open(make_config(file.path(), 8192));
	REQUIRE(store);
	CHECK((*store)->size_bytes() == 8192);
}
