// SPDX-License-Identifier: GPL-2.0-or-later
// The rbd backstore's data path against a live cluster: what READ, WRITE
// (FUA), SYNCHRONIZE CACHE, UNMAP, WRITE SAME and COMPARE AND WRITE become,
// checked through a second, independent client where that proves more.
#include <chrono>

#include "rbd_test_util.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {
constexpr uint64_t image_size = 16 << 20;
}

TEST_CASE("rbd: writes read back, through scattered iovecs and another client", "[rbd][io]")
{
	admin_client admin;
	std::string name = admin.create(image_size);
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size));
	CHECK(f.store->lock_state() == rbd_lock_state::owner);
	backstore_caps caps = f.store->caps();
	CHECK(caps.discard);
	CHECK(caps.discard_zeroes);
	CHECK(caps.write_zeroes);
	CHECK(caps.compare_and_write);
	CHECK(caps.optimal_io_bytes == 4u << 20);

	std::vector<char> data = pattern(12288, 1);
	iovec out[3] = {{data.data(), 512}, {data.data() + 512, 7680}, {data.data() + 8192, 4096}};
	block_io w;
	w.op = block_op::write;
	w.offset = (4 << 20) - 4096;  // across an object boundary
	w.length = data.size();
	w.iov = out;
	CHECK(f.run(w) == int64_t(data.size()));
	CHECK(f.read(w.offset, data.size()) == data);
	CHECK(f.range(block_op::flush, 0, 0) == 0);

	// The other client sees it: it reached the OSDs, not a cache of ours.
	rbd_image_t img = admin.open(name);
	std::vector<char> seen(data.size());
	REQUIRE(rbd_read(img, w.offset, seen.size(), seen.data()) == ssize_t(seen.size()));
	CHECK(seen == data);

	// FUA write, then a multi-iovec read.
	std::vector<char> more = pattern(4096, 2);
	CHECK(f.write(1 << 20, more, true) == 4096);
	std::vector<char> back(4096);
	iovec in[2] = {{back.data(), 1000}, {back.data() + 1000, 3096}};
	block_io r;
	r.op = block_op::read;
	r.offset = 1 << 20;
	r.length = 4096;
	r.iov = in;
	CHECK(f.run(r) == 4096);
	CHECK(back == more);
}

TEST_CASE("rbd: discard and write_zeroes read back as zeroes, partial ones too", "[rbd][io]")
{
	admin_client admin;
	std::string name = admin.create(image_size);
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size));
	std::vector<char> data = pattern(65536, 3);
	REQUIRE(f.write(0, data) == 65536);
	// 512 bytes in the middle of an object: librbd would skip a partial
	// discard by default (rbd_skip_partial_discard), and LBPRZ would lie.
	CHECK(f.range(block_op::discard, 1024, 512) == 0);
	CHECK(f.range(block_op::write_zeroes, 8192, 4096, true) == 0);
	std::vector<char> expect = data;
	std::fill_n(expect.begin() + 1024, 512, 0);
	std::fill_n(expect.begin() + 8192, 4096, 0);
	CHECK(f.read(0, 65536) == expect);
	// A whole object discarded reads as zeroes too.
	CHECK(f.range(block_op::discard, 0, 4 << 20) == 0);
	CHECK(f.read(0, 65536) == std::vector<char>(65536, 0));
}

TEST_CASE("rbd: compare_and_write writes on a match, reports the first difference", "[rbd][io][caw]")
{
	admin_client admin;
	std::string name = admin.create(image_size);
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size));
	std::vector<char> old = pattern(512, 4), fresh = pattern(512, 5);
	const uint64_t at = (3 << 20) + 512;
	REQUIRE(f.write(at, old) == 512);

	std::vector<char> both = old;
	both.insert(both.end(), fresh.begin(), fresh.end());
	iovec iov{both.data(), both.size()};
	block_io caw;
	caw.op = block_op::compare_and_write;
	caw.offset = at;
	caw.length = 512;
	caw.iov = {&iov, 1};
	CHECK(f.run(caw) == 0);
	CHECK(f.read(at, 512) == fresh);

	// Now the medium holds `fresh`; compare against it with byte 300
	// changed: MISCOMPARE at 300, nothing written.
	std::vector<char> wrong = fresh;
	wrong[300] ^= 0x40;
	std::vector<char> third = pattern(512, 6);
	wrong.insert(wrong.end(), third.begin(), third.end());
	// Scattered this time: the queue flattens it.
	iovec parts[3] = {{wrong.data(), 100}, {wrong.data() + 100, 700},
			  {wrong.data() + 800, 224}};
	caw.iov = parts;
	caw.miscompare_offset = 12345;
	CHECK(f.run(caw) == -EILSEQ);
	CHECK(caw.miscompare_offset == 300);
	CHECK(f.read(at, 512) == fresh);

	// Wider than one sector: refused untouched, for the SCSI layer's own
	// two-step path.
	std::vector<char> wide(2048);
	iovec w{wide.data(), wide.size()};
	caw.iov = {&w, 1};
	caw.length = 1024;
	CHECK(f.run(caw) == -EOPNOTSUPP);
	CHECK(f.read(at, 512) == fresh);
}

TEST_CASE("rbd: requests outside the image are refused without reaching librbd", "[rbd][io]")
{
	admin_client admin;
	std::string name = admin.create(image_size);
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size));
	std::vector<char> data(4096);
	CHECK(f.write(image_size - 512, data) == -EINVAL);
	CHECK(f.range(block_op::discard, image_size, 512) == -EINVAL);
	CHECK(f.range(block_op::prefetch, 0, 512) == -EOPNOTSUPP);
}

TEST_CASE("rbd: resize grows the image and refuses to shrink it", "[rbd][size]")
{
	admin_client admin;
	std::string name = admin.create(image_size);
	rbd_fixture f(open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size));
	auto shrunk = f.store->resize(image_size / 2);
	REQUIRE_FALSE(shrunk);
	CHECK(shrunk.error().error == EINVAL);
	CHECK_THAT(shrunk.error().what(), Catch::Contains("never shrinks"));
	CHECK(f.store->size_bytes() == image_size);

	REQUIRE(f.store->resize(2 * image_size));
	CHECK(f.store->size_bytes() == 2 * image_size);
	rbd_image_t img = admin.open(name);
	uint64_t size = 0;
	REQUIRE(rbd_get_size(img, &size) == 0);
	CHECK(size == 2 * image_size);
	std::vector<char> tail = pattern(4096, 7);
	CHECK(f.write(2 * image_size - 4096, tail) == 4096);
	CHECK(f.read(2 * image_size - 4096, 4096) == tail);
}

TEST_CASE("rbd: one handle per queue serves several queues", "[rbd][io]")
{
	admin_client admin;
	std::string name = admin.create(image_size, false);
	rbd_open_options opts;
	opts.handle_per_queue = true;
	auto store = open_rbd("rbd/" + name + ";conf=" + ceph_conf(), image_size, opts);
	rbd_fixture f(std::move(store));
	std::vector<char> data = pattern(8192, 8);
	CHECK(f.write(8192, data) == 8192);
	CHECK(f.read(8192, 8192) == data);
}
