// SPDX-License-Identifier: GPL-2.0-or-later
// file_backstore::open: size reconciliation, O_DIRECT and capability probes.
#include "file_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

struct open_result {
	std::unique_ptr<backstore> store;
	int error = 0;
	std::string reason;
};

open_result try_open(const std::string &cfgstring, uint64_t dev_size)
{
	open_result r;
	auto opened = file_backstore::open(make_config(cfgstring, dev_size));
	if (opened) {
		r.store = std::move(*opened);
	} else {
		r.error = opened.error().negative_errno();
		r.reason = opened.error().what();
	}
	return r;
}

} // namespace

TEST_CASE("a backing file smaller than the device is refused with the reason", "[file][open]")
{
	temp_file file(1 << 20);
	log_capture log;
	open_result r = try_open(file.path(), 2 << 20);
	CHECK_FALSE(r.store);
	CHECK(r.error == -EINVAL);
	CHECK(r.reason.find("smaller than the device size") != std::string::npos);
	CHECK(r.reason.find("extend=1") != std::string::npos);
	// Logged once, by the caller (tcmu_device), not here as well.
	CHECK_FALSE(log.contains("cannot open"));
	CHECK(file.size() == (1 << 20)); // untouched
}

TEST_CASE("extend=1 grows a smaller backing file to the device size", "[file][open]")
{
	temp_file file(1 << 20);
	log_capture log;
	auto store = open_store(file.path() + ";extend=1", 2 << 20);
	CHECK(store->size_bytes() == (2 << 20));
	CHECK(file.size() == (2 << 20));
	CHECK(log.contains("extended"));
}

TEST_CASE("a larger backing file is served up to the device size, and says so", "[file][open]")
{
	temp_file file(4 << 20);
	log_capture log;
	auto store = open_store(file.path(), 1 << 20);
	CHECK(store->size_bytes() == (1 << 20));
	CHECK(file.size() == (4 << 20)); // never truncated
	CHECK(log.contains("only the first 1048576"));
}

TEST_CASE("a device size of 0 is refused", "[file][open]")
{
	temp_file file(4096);
	open_result r = try_open(file.path(), 0);
	CHECK_FALSE(r.store);
	CHECK(r.reason.find("device size") != std::string::npos);
}

TEST_CASE("a missing backing file fails open with -ENOENT, naming its path once", "[file][open]")
{
	open_result r = try_open("/nonexistent/tcmud/img;direct=1", 4096);
	CHECK_FALSE(r.store);
	CHECK(r.error == -ENOENT);
	CHECK(r.reason == "cannot open /nonexistent/tcmud/img: No such file or directory");
}

TEST_CASE("a backing file that is neither a file nor a block device is refused by name",
	  "[file][open]")
{
	open_result r = try_open("/dev/null", 4096);
	CHECK_FALSE(r.store);
	CHECK(r.reason == "/dev/null is neither a regular file nor a block device: Invalid argument");
}

TEST_CASE("a malformed cfgstring fails open with -EINVAL", "[file][open]")
{
	temp_file file(4096);
	open_result r = try_open(file.path() + ";direct=2", 4096);
	CHECK_FALSE(r.store);
	CHECK(r.error == -EINVAL);
}

TEST_CASE("direct=1 opens the backing file with O_DIRECT", "[file][open]")
{
	temp_file file(1 << 20);
	auto store = open_store(file.path() + ";direct=1", 1 << 20);
	CHECK(static_cast<file_backstore &>(*store).direct());
}

TEST_CASE("on ext4 discard punches holes that read as zeroes, and zero range is used", "[file][open]")
{
	temp_file file(1 << 20);
	auto store = open_store(file.path(), 1 << 20);
	backstore_caps caps = store->caps();
	CHECK(caps.discard);
	CHECK(caps.discard_zeroes);
	CHECK(caps.write_zeroes);
	CHECK(file.size() == (1 << 20)); // the probes kept the size
}

TEST_CASE("resize with extend=1 grows the file, and queues admit the new range", "[file][resize]")
{
	temp_file file(1 << 20);
	log_capture log;
	auto store = open_store(file.path() + ";extend=1", 1 << 20);
	auto engine = make_engine();
	auto queue = std::move(*store->open_queue(*engine));

	std::vector<char> buf(4096, 'x');
	iovec iov{buf.data(), buf.size()};
	block_io past_old_end = make_rw(block_op::write, (1 << 20) + 8192, {&iov, 1});
	CHECK(run_io(*engine, *queue, past_old_end) == -EINVAL);

	REQUIRE(store->resize(2 << 20));
	CHECK(store->size_bytes() == (2 << 20));
	CHECK(file.size() == (2 << 20));
	CHECK(log.contains("extended"));
	block_io again = make_rw(block_op::write, (1 << 20) + 8192, {&iov, 1});
	CHECK(run_io(*engine, *queue, again) == 4096);
}

TEST_CASE("resize past a file without extend=1 is refused and nothing changes", "[file][resize]")
{
	temp_file file(1 << 20);
	log_capture log;
	auto store = open_store(file.path(), 1 << 20);
	auto resized = store->resize(2 << 20);
	REQUIRE_FALSE(resized);
	CHECK(resized.error().error == EINVAL);
	std::string why = resized.error().what();
	CHECK(why.find("smaller than the device size") != std::string::npos);
	CHECK(why.find("extend=1") != std::string::npos);
	CHECK(store->size_bytes() == (1 << 20));
	CHECK(file.size() == (1 << 20));
}

TEST_CASE("shrinking never truncates the file; queues refuse the cut-off tail", "[file][resize]")
{
	temp_file file(2 << 20);
	log_capture log;
	auto store = open_store(file.path(), 2 << 20);
	auto engine = make_engine();
	auto queue = std::move(*store->open_queue(*engine));
	REQUIRE(store->resize(1 << 20));
	CHECK(store->size_bytes() == (1 << 20));
	CHECK(file.size() == (2 << 20)); // the data past the new end is still there
	std::vector<char> buf(4096);
	iovec iov{buf.data(), buf.size()};
	block_io tail = make_rw(block_op::read, (1 << 20), {&iov, 1});
	CHECK(run_io(*engine, *queue, tail) == -EINVAL);
	// and growing back serves the old tail again, no extend needed
	REQUIRE(store->resize(2 << 20));
	block_io back = make_rw(block_op::read, (1 << 20), {&iov, 1});
	CHECK(run_io(*engine, *queue, back) == 4096);
}

TEST_CASE("a symbolic link as the backing file is refused, and extend=1 grows nothing",
	  "[file][open][symlink]")
{
	temp_file target(1 << 20);
	temp_dir dir;
	REQUIRE(symlink(target.path().c_str(), (dir / "img").c_str()) == 0);
	open_result r = try_open(dir / "img;extend=1", 2 << 20);
	CHECK_FALSE(r.store);
	CHECK(r.error == -ELOOP);
	CHECK(r.reason.find("cannot open " + dir / "img: " + dir / "img is a symbolic link to " +
			    target.path()) == 0);
	CHECK(r.reason.find("tcmud does not follow symbolic links in backing paths; "
			    "configure the real path") != std::string::npos);
	CHECK(target.size() == (1 << 20));
}

TEST_CASE("a symbolic link to a directory on the backing path is refused",
	  "[file][open][symlink]")
{
	temp_dir dir;
	REQUIRE(mkdir((dir / "real").c_str(), 0755) == 0);
	write_file(dir / "real/img", 1 << 20, 'a');
	REQUIRE(symlink("real", (dir / "lun").c_str()) == 0);
	open_result r = try_open(dir / "lun/img;extend=1", 2 << 20);
	CHECK_FALSE(r.store);
	CHECK(r.error == -ELOOP);
	CHECK(r.reason.find(dir / "lun is a symbolic link to real") != std::string::npos);
	struct stat st;
	REQUIRE(stat((dir / "real/img").c_str(), &st) == 0);
	CHECK(st.st_size == (1 << 20));
}

TEST_CASE("a block device is served only with block, and block serves no regular file",
	  "[file][open][block]")
{
	std::string why_not;
	auto loop = loop_device::attach(1 << 20, &why_not);
	if (!loop)
		TCMUD_SKIP(why_not);
	open_result bare = try_open(loop->path(), 1 << 20);
	CHECK_FALSE(bare.store);
	CHECK(bare.error == -EINVAL);
	CHECK(bare.reason == loop->path() + " is a block device: Invalid argument — add ;block "
					    "to the cfgstring to serve a block device");

	open_result with_block = try_open(loop->path() + ";block", 1 << 20);
	INFO(with_block.reason);
	REQUIRE(with_block.store);
	CHECK(with_block.store->size_bytes() == (1 << 20));

	temp_file file(1 << 20);
	open_result file_as_block = try_open(file.path() + ";block", 1 << 20);
	CHECK_FALSE(file_as_block.store);
	CHECK(file_as_block.error == -EINVAL);
	CHECK(file_as_block.reason.find("is a regular file, not a block device") !=
	      std::string::npos);
}

TEST_CASE("the served fd blocks: O_NONBLOCK is only for the open", "[file][open]")
{
	temp_file file(1 << 20);
	auto store = open_store(file.path(), 1 << 20);
	// Find the store's fd by what it names, and read its flags (octal).
	std::optional<unsigned long> flags;
	for (const auto &entry : std::filesystem::directory_iterator("/proc/self/fd")) {
		std::error_code ec;
		if (std::filesystem::read_symlink(entry.path(), ec) != file.path())
			continue;
		std::string info = "/proc/self/fdinfo/" + entry.path().filename().string();
		int fd = ::open(info.c_str(), O_RDONLY | O_CLOEXEC);
		REQUIRE(fd >= 0);
		char text[512]{};
		REQUIRE(read(fd, text, sizeof text - 1) > 0);
		close(fd);
		const char *at = strstr(text, "flags:");
		REQUIRE(at);
		flags = strtoul(at + 6, nullptr, 8);
	}
	REQUIRE(flags);
	CHECK((*flags & O_NONBLOCK) == 0);
	CHECK((*flags & O_ACCMODE) == O_RDWR);
}
