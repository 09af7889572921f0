// SPDX-License-Identifier: GPL-2.0-or-later
// The whole daemon-side path on an rbd image: a real queue worker (its
// io_uring polling the rbd queue's eventfd next to the ring doorbell), the
// SCSI layer and the rbd backstore, fed through the in-process ring model.
// What an initiator would see: status, sense and data.
#include "handler_registry.h"
#include "log/log.h"
#include "rbd_test_util.h"
#include "scsi/logical_unit.h"
#include "worker_rig.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

constexpr uint32_t block = 512;
constexpr uint64_t blocks = (8 << 20) / block;

std::vector<uint8_t> cdb10(uint8_t op, uint32_t lba, uint16_t count, uint8_t byte1 = 0)
{
	return {op, byte1, uint8_t(lba >> 24), uint8_t(lba >> 16), uint8_t(lba >> 8), uint8_t(lba),
		0, uint8_t(count >> 8), uint8_t(count), 0};
}

std::vector<uint8_t> caw_cdb(uint64_t lba, uint8_t count)
{
	std::vector<uint8_t> c(16, 0);
	c[0] = 0x89;
	for (int i = 0; i < 8; i++)
		c[2 + i] = uint8_t(lba >> (56 - 8 * i));
	c[13] = count;
	return c;
}

struct sense_view {
	uint8_t key, asc, ascq;
	uint32_t info;
};

sense_view sense_of(const model_completion &c)
{
	REQUIRE(c.sense.size() >= 18);
	REQUIRE((c.sense[0] & 0x7f) == 0x70);  // fixed format
	return {uint8_t(c.sense[2] & 0x0f), c.sense[12], c.sense[13],
		uint32_t(c.sense[3]) << 24 | uint32_t(c.sense[4]) << 16 |
			uint32_t(c.sense[5]) << 8 | c.sense[6]};
}

// An rbd device through the registry (as the daemon finds it by subtype),
// its logical unit, and one queue worker on them.
struct rbd_device {
	admin_client admin;
	std::string name = admin.create(blocks * block);
	// Opened through the registry, as the daemon finds it by subtype.
	scratch_unit unit{block, blocks, "rbd", "rbd/" + name + ";conf=" + ceph_conf()};
	// Declared after unit: the worker (and its rbd queue) goes first.
	std::unique_ptr<single_queue_rig> rig;

	rbd_device()
	{
		CHECK(find_handler("rbd")->check_config("rbd/" + name));
		rig = std::make_unique<single_queue_rig>(block, 16, "rbd/test:", "ram", 32,
							 [this](queue_params &qp) {
								 qp.store = unit.store.get();
								 qp.lu = unit.lu.get();
							 });
	}
	const model_completion &run(const std::vector<uint8_t> &cdb,
				    const std::vector<uint8_t> &out = {}, size_t in = 0)
	{
		size_t before = rig->model.completions().size();
		REQUIRE(rig->model.queue_command(cdb, out, in));
		rig->interrupt();
		rig->collect(before + 1);
		return rig->model.completions().back();
	}
};

} // namespace

TEST_CASE("rbd through the queue worker: I/O, COMPARE AND WRITE, a fenced gateway",
	  "[rbd][worker]")
{
	set_log_level(log_level::warn);
	rbd_device d;
	std::vector<uint8_t> data(8 * block);
	for (size_t i = 0; i < data.size(); i++)
		data[i] = uint8_t(i * 13 + 5);
	CHECK(d.run(cdb10(0x2a, 2048, 8, 0x08), data).scsi_status == 0);  // WRITE(10) FUA
	const model_completion &r = d.run(cdb10(0x28, 2048, 8), {}, data.size());
	CHECK(r.scsi_status == 0);
	CHECK(r.data_in == data);
	CHECK(d.run(cdb10(0x35, 0, 0)).scsi_status == 0);  // SYNCHRONIZE CACHE(10)

	// COMPARE AND WRITE of block 2048: matches, then miscompares at 77.
	std::vector<uint8_t> caw(data.begin(), data.begin() + block);
	std::vector<uint8_t> fresh(block, 0xab);
	caw.insert(caw.end(), fresh.begin(), fresh.end());
	CHECK(d.run(caw_cdb(2048, 1), caw).scsi_status == 0);
	std::vector<uint8_t> wrong(fresh);
	wrong[77] ^= 1;
	wrong.insert(wrong.end(), block, 0xcd);
	const model_completion &m = d.run(caw_cdb(2048, 1), wrong);
	REQUIRE(m.scsi_status == 2);
	sense_view s = sense_of(m);
	CHECK(s.key == 0x0e);  // MISCOMPARE
	CHECK(s.asc == 0x1d);
	CHECK(s.info == 77);
	CHECK(d.run(cdb10(0x28, 2048, 1), {}, block).data_in == fresh);

	// Another gateway breaks our lock: our WRITE, sent at once (the
	// reopen waits at least reopen_backoff, 1 s), fails with NOT READY,
	// BECOMING READY (initiators retry it while tcmud reopens the image);
	// never GOOD.
	admin_client other;
	rbd_image_t img = other.open(d.name);
	break_exclusive_lock(img);
	const model_completion &w = d.run(cdb10(0x2a, 4096, 8), data);
	REQUIRE(w.scsi_status == 2);
	s = sense_of(w);
	CHECK(s.key == 0x02);
	CHECK(s.asc == 0x04);
	CHECK(s.ascq == 0x01);
}
