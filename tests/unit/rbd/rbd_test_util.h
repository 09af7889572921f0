// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Helpers for the rbd tests that run against a live cluster: CEPH_CONF
// names it (with-ceph.sh brings one up), an admin client makes and removes
// images, and a block_io runs to completion through a real io_uring.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <rados/librados.h>
#include <rbd/librbd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <fstream>
#include <string>
#include <vector>

#include "io/uring_engine.h"
#include "rbd/rbd_backstore.h"

namespace tcmud::test {

inline std::string ceph_conf()
{
	const char *c = getenv("CEPH_CONF");
	REQUIRE(c);
	return c;
}

// A second, independent client (another gateway, or the administrator).
class admin_client {
public:
	explicit admin_client(const char *id = nullptr)
	{
		REQUIRE(rados_create(&cluster_, id) == 0);
		REQUIRE(rados_conf_read_file(cluster_, ceph_conf().c_str()) == 0);
		rados_conf_set(cluster_, "client_mount_timeout", "10");
		rados_conf_set(cluster_, "rbd_cache", "false");
		REQUIRE(rados_connect(cluster_) == 0);
		REQUIRE(rados_ioctx_create(cluster_, "rbd", &io_) == 0);
	}
	~admin_client()
	{
		for (rbd_image_t img : open_)
			rbd_close(img);
		rados_ioctx_destroy(io_);
		rados_shutdown(cluster_);
	}
	admin_client(const admin_client &) = delete;
	admin_client &operator=(const admin_client &) = delete;

	rados_ioctx_t io() const { return io_; }
	rados_t cluster() const { return cluster_; }

	// A fresh image of `size` bytes with rbd's default features
	// (exclusive-lock among them) or only layering.
	std::string create(uint64_t size, bool exclusive_lock = true)
	{
		static int serial;
		std::string name = "t" + std::to_string(getpid()) + "-" + std::to_string(++serial);
		uint64_t features = RBD_FEATURE_LAYERING;
		if (exclusive_lock)
			features |= RBD_FEATURE_EXCLUSIVE_LOCK;
		int order = 22;
		REQUIRE(rbd_create2(io_, name.c_str(), size, features, &order) == 0);
		return name;
	}
	rbd_image_t open(const std::string &name)
	{
		rbd_image_t img = nullptr;
		REQUIRE(rbd_open(io_, name.c_str(), &img, nullptr) == 0);
		open_.push_back(img);
		return img;
	}

	// The JSON output of a mon or mgr command ("osd blocklist ls",
	// "service dump"), or empty if it failed.
	enum class to { mon, mgr };
	std::string command(to daemon, const std::string &prefix)
	{
		const std::string json = R"({"prefix": ")" + prefix + R"(", "format": "json"})";
		const char *cmd[] = {json.c_str()};
		char *out = nullptr, *status = nullptr;
		size_t out_len = 0, status_len = 0;
		int r = daemon == to::mon ? rados_mon_command(cluster_, cmd, 1, "", 0, &out, &out_len,
							      &status, &status_len)
					  : rados_mgr_command(cluster_, cmd, 1, "", 0, &out, &out_len,
							      &status, &status_len);
		std::string text = r == 0 && out ? std::string(out, out_len) : std::string();
		rados_buffer_free(out);
		rados_buffer_free(status);
		return text;
	}
	// Whether `address` ("10.0.0.1:0/123") is on the OSD blocklist, as
	// `ceph osd blocklist ls` says.
	bool blocklisted(const std::string &address)
	{
		std::string listing = command(to::mon, "osd blocklist ls");
		REQUIRE(!listing.empty());
		return !address.empty() && listing.find(address) != std::string::npos;
	}

private:
	rados_t cluster_ = nullptr;
	rados_ioctx_t io_ = nullptr;
	std::vector<rbd_image_t> open_;
};

inline backstore_config rbd_cfg(const std::string &cfgstring, uint64_t dev_size)
{
	backstore_config cfg;
	cfg.subtype = "rbd";
	cfg.cfgstring = cfgstring;
	cfg.dev_size = dev_size;
	cfg.block_size = 512;
	cfg.log_prefix = "rbd/test:";
	return cfg;
}

inline std::unique_ptr<rbd_backstore> open_rbd(const std::string &cfgstring, uint64_t dev_size,
					       const rbd_open_options &opts = {})
{
	auto store = rbd_backstore::open_with(rbd_cfg(cfgstring, dev_size), opts);
	INFO("open failed: " << (store ? "" : store.error().what()));
	REQUIRE(store);
	return std::move(*store);
}

struct recording_done final : io_completion {
	std::vector<int64_t> results;
	void io_done(int64_t result) override { results.push_back(result); }
};

// An engine, a store and one queue on it. The queue goes before the engine.
struct rbd_fixture {
	std::unique_ptr<uring_engine> engine;
	std::unique_ptr<rbd_backstore> store;
	std::unique_ptr<backstore_queue> queue;

	explicit rbd_fixture(std::unique_ptr<rbd_backstore> s) : store(std::move(s))
	{
		auto created = uring_engine::create({});
		REQUIRE(created);
		engine = std::move(*created);
		auto opened = store->open_queue(*engine);
		INFO((opened ? "" : opened.error().what()));
		REQUIRE(opened);
		queue = std::move(*opened);
	}
	~rbd_fixture()
	{
		queue.reset();
		store.reset();
		engine.reset();
	}

	// Runs io to completion (bounded by `seconds`); returns its result.
	int64_t run(block_io &io, int seconds = 20)
	{
		recording_done done;
		io.done = &done;
		queue->submit(io);
		const __kernel_timespec wait{.tv_sec = 0, .tv_nsec = 200'000'000};
		for (int round = 0; round < seconds * 5 && done.results.empty(); round++)
			REQUIRE(engine->run_once(1, &wait) >= 0);
		REQUIRE(done.results.size() == 1);
		return done.results[0];
	}
	int64_t write(uint64_t offset, std::vector<char> &data, bool fua = false)
	{
		iovec iov{data.data(), data.size()};
		block_io io;
		io.op = block_op::write;
		io.fua = fua;
		io.offset = offset;
		io.length = data.size();
		io.iov = {&iov, 1};
		return run(io);
	}
	std::vector<char> read(uint64_t offset, size_t len, int64_t *result = nullptr)
	{
		std::vector<char> data(len, 'X');
		iovec iov{data.data(), data.size()};
		block_io io;
		io.op = block_op::read;
		io.offset = offset;
		io.length = len;
		io.iov = {&iov, 1};
		int64_t r = run(io);
		if (result)
			*result = r;
		else
			REQUIRE(r == int64_t(len));
		return data;
	}
	int64_t range(block_op op, uint64_t offset, uint64_t length, bool fua = false)
	{
		block_io io;
		io.op = op;
		io.fua = fua;
		io.offset = offset;
		io.length = length;
		return run(io);
	}
};

// What another gateway's failover does to the current owner of `img`'s
// exclusive lock (tcmu-runner's way): breaks it, which blocklists that
// client.
inline void break_exclusive_lock(rbd_image_t img)
{
	rbd_lock_mode_t mode;
	char *owners[1] = {};
	size_t count = 1;
	REQUIRE(rbd_lock_get_owners(img, &mode, owners, &count) == 0);
	REQUIRE(count == 1);
	REQUIRE(rbd_lock_break(img, RBD_LOCK_MODE_EXCLUSIVE, owners[0]) == 0);
	rbd_lock_get_owners_cleanup(owners, count);
}

// A conf file of our own, removed at the end of the test.
struct temp_conf {
	std::string path;
	explicit temp_conf(const std::string &text)
	{
		char name[] = "/tmp/tcmud-rbd-conf-XXXXXX.conf";
		int fd = mkstemps(name, 5);
		REQUIRE(fd >= 0);
		close(fd);
		path = name;
		std::ofstream(path) << text;
	}
	~temp_conf() { unlink(path.c_str()); }
};

inline std::vector<char> pattern(size_t len, unsigned seed)
{
	std::vector<char> data(len);
	for (size_t i = 0; i < len; i++)
		data[i] = static_cast<char>((i * 131 + seed * 7 + 1) & 0xff);
	return data;
}

} // namespace tcmud::test
