// SPDX-License-Identifier: GPL-2.0-or-later
// Opening an rbd backstore wrongly fails fast, with a reason that names
// the cause; a size that disagrees with the image is refused.
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "rbd_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

struct refusal {
	int error = 0;
	std::string reason;
	double seconds = 0;
};

refusal refuse(const std::string &cfgstring, uint64_t size)
{
	refusal out;
	auto t0 = std::chrono::steady_clock::now();
	auto store = rbd_backstore::open_with(rbd_cfg(cfgstring, size), {});
	out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	INFO(cfgstring);
	REQUIRE(!store);
	out.error = store.error().negative_errno();
	out.reason = store.error().what();
	REQUIRE(out.error < 0);
	UNSCOPED_INFO("refused: " << out.reason << " (" << out.error << ", " << out.seconds << " s)");
	return out;
}

} // namespace

TEST_CASE("rbd open: wrong pool, image, user, conf, size", "[rbd][open]")
{
	admin_client admin;
	const uint64_t size = 8 << 20;
	std::string name = admin.create(size);
	const std::string conf = ";conf=" + ceph_conf();

	refusal r = refuse("nopool/" + name + conf, size);
	CHECK(r.error == -ENOENT);
	CHECK_THAT(r.reason, Catch::Contains("pool 'nopool'") && Catch::Contains("no such pool"));

	r = refuse("rbd/noimage" + conf, size);
	CHECK(r.error == -ENOENT);
	CHECK_THAT(r.reason, Catch::Contains("rbd/noimage") && Catch::Contains("no such image"));

	r = refuse("rbd/" + name + conf + ";id=nosuchuser", size);
	CHECK_THAT(r.reason, Catch::Contains("client.nosuchuser"));
	CHECK(r.seconds < rbd_connect_timeout + 3);

	r = refuse("rbd/" + name + ";conf=/nonexistent/ceph.conf", size);
	CHECK(r.error == -ENOENT);
	CHECK_THAT(r.reason, Catch::Contains("cannot read conf /nonexistent/ceph.conf"));

	r = refuse("rbd/" + name + conf, size + 512);
	CHECK(r.error == -EINVAL);
	CHECK_THAT(r.reason, Catch::Contains(std::to_string(size) + " bytes but the device size is " +
					     std::to_string(size + 512)));
}

TEST_CASE("rbd open: a cluster that does not answer fails within seconds", "[rbd][open]")
{
	// The real keyring, but monitors nobody listens on (port 1 on
	// loopback: refused at once; the wait is the mon hunt's).
	char path[] = "/tmp/tcmud-rbd-dead-XXXXXX.conf";
	int fd = mkstemps(path, 5);
	REQUIRE(fd >= 0);
	close(fd);
	{
		std::ofstream out(path);
		out << "[global]\nmon host = 127.0.0.1:1\n";
	}
	refusal r = refuse(std::string("rbd/disk0;conf=") + path, 1 << 20);
	unlink(path);
	CHECK_THAT(r.reason, Catch::Contains("cannot connect") && Catch::Contains("127.0.0.1:1"));
	CHECK(r.seconds < rbd_connect_timeout + 3);
}

namespace {

std::string conf_value(rados_t cluster, const char *key)
{
	char buf[512] = {};
	REQUIRE(rados_conf_get(cluster, key, buf, sizeof(buf)) == 0);
	return buf;
}

} // namespace

TEST_CASE("rbd open: a wrong key is an authentication failure", "[rbd][open]")
{
	admin_client admin;
	const uint64_t size = 8 << 20;
	std::string name = admin.create(size);
	std::string key = conf_value(admin.cluster(), "key");
	if (key.empty()) {
		// The key lives in the keyring: take it from there.
		std::ifstream in(conf_value(admin.cluster(), "keyring"));
		std::string line;
		while (std::getline(in, line))
			if (auto at = line.find("key = "); at != std::string::npos)
				key = line.substr(at + 6);
	}
	REQUIRE(key.size() > 10);
	// Same length and format, another secret (a character of it changed).
	char &c = key[key.size() - 6];
	c = c == 'A' ? 'B' : 'A';
	temp_conf conf("[global]\nmon host = " + conf_value(admin.cluster(), "mon_host") +
		       "\n[client.admin]\nkey = " + key + "\n");
	refusal r = refuse("rbd/" + name + ";conf=" + conf.path, size);
	CHECK(r.error == -EACCES);
	CHECK_THAT(r.reason, Catch::Contains("authentication failed"));
	CHECK(r.seconds < rbd_connect_timeout + 3);
}

TEST_CASE("rbd open: librbd's cache stays off unless the conf turns it on", "[rbd][open]")
{
	admin_client admin;
	const uint64_t size = 8 << 20;
	std::string name = admin.create(size);
	std::ifstream real(ceph_conf());
	std::string text((std::istreambuf_iterator<char>(real)), std::istreambuf_iterator<char>());
	{
		temp_conf plain(text);
		auto store = open_rbd("rbd/" + name + ";conf=" + plain.path, size);
		CHECK(!store->cache_enabled());
	}
	temp_conf cached(text + "\n[client]\nrbd cache = true\n");
	auto store = open_rbd("rbd/" + name + ";conf=" + cached.path, size);
	CHECK(store->cache_enabled());
}

TEST_CASE("rbd open: an image-level rbd_cache true is the cache librbd runs with",
	  "[rbd][open]")
{
	// rbd config image set POOL/IMAGE rbd_cache true: librbd applies it at
	// open over the conf (and over tcmud's own rados_conf_set). Judged
	// from the conf alone, FUA writes would skip the flush while librbd
	// holds them in its cache.
	admin_client admin;
	const uint64_t size = 8 << 20;
	std::string name = admin.create(size);
	rbd_image_t img = admin.open(name);
	REQUIRE(rbd_metadata_set(img, "conf_rbd_cache", "true") == 0);
	std::ifstream real(ceph_conf());
	std::string text((std::istreambuf_iterator<char>(real)), std::istreambuf_iterator<char>());
	temp_conf plain(text);
	auto store = open_rbd("rbd/" + name + ";conf=" + plain.path, size);
	CHECK(store->cache_enabled());
	// And back off at the image level: off again, conf or not.
	REQUIRE(rbd_metadata_set(img, "conf_rbd_cache", "false") == 0);
	temp_conf cached(text + "\n[client]\nrbd cache = true\n");
	auto off = open_rbd("rbd/" + name + ";conf=" + cached.path, size);
	CHECK_FALSE(off->cache_enabled());
}

namespace {

std::unique_ptr<rbd_session> open_session(const std::string &cfgstring)
{
	auto cfg = parse_rbd_config(cfgstring);
	REQUIRE(cfg);
	auto s = rbd_session::open(*cfg);
	INFO("open failed: " << (s ? "" : s.error().what()));
	REQUIRE(s);
	return std::move(*s);
}

} // namespace

// tcmud starts librbd requests in the queue's thread (docs/rbd.md, "Data
// path"); an administrator's conf may still ask for librbd's dispatch thread.
TEST_CASE("rbd open: requests start in the caller's thread unless the conf says otherwise",
	  "[rbd][open]")
{
	admin_client admin;
	std::string name = admin.create(8 << 20);
	std::ifstream real(ceph_conf());
	std::string text((std::istreambuf_iterator<char>(real)), std::istreambuf_iterator<char>());
	{
		temp_conf plain(text);
		auto s = open_session("rbd/" + name + ";conf=" + plain.path);
		CHECK(conf_value(s->cluster(), "rbd_non_blocking_aio") == "false");
	}
	temp_conf queued(text + "\n[client]\nrbd non blocking aio = true\n");
	auto s = open_session("rbd/" + name + ";conf=" + queued.path);
	CHECK(conf_value(s->cluster(), "rbd_non_blocking_aio") == "true");
}
