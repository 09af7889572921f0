// SPDX-License-Identifier: GPL-2.0-or-later
// Host-side measurement for the rbd handler: 4 KiB random reads or writes
// at a fixed depth per queue, through rbd_backstore's queues (each on its
// own thread and io_uring, as the daemon runs them), with one image handle
// per device or one per queue. No VM, no kernel ring: what the handler and
// librbd cost on their own, against a live cluster.
//   rbd_queues CONF POOL/IMAGE device|queue QUEUES DEPTH SECONDS randread|randwrite
// The image must be exactly as large as librbd reports; its first 64 MiB
// are written once before reads. Prints one line: mode queues depth op IOPS
// and CPU microseconds per I/O of the whole process (librbd included).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io/uring_engine.h"
#include "rbd/rbd_backstore.h"

using namespace tcmud;

namespace {

constexpr uint64_t region = 64 << 20;
constexpr uint64_t io_size = 4096;

struct slot final : io_completion {
	struct runner *owner = nullptr;
	std::vector<char> buf = std::vector<char>(io_size, 'x');
	iovec iov{};
	block_io io;
	void io_done(int64_t result) override;
};

struct runner {
	backstore_queue *queue = nullptr;
	bool write = false;
	bool stop = false;
	uint64_t done = 0;
	uint64_t errors = 0;
	std::mt19937_64 rng{std::random_device{}()};
	void start(slot &s)
	{
		s.io.op = write ? block_op::write : block_op::read;
		s.io.offset = (rng() % (region / io_size)) * io_size;
		s.io.length = io_size;
		s.iov = {s.buf.data(), io_size};
		s.io.iov = {&s.iov, 1};
		s.io.done = &s;
		queue->submit(s.io);
	}
};

void slot::io_done(int64_t result)
{
	if (result != int64_t(io_size))
		owner->errors++;
	owner->done++;
	if (!owner->stop)
		owner->start(*this);
}

uint64_t run_queue(rbd_backstore &store, unsigned depth, bool write, double seconds,
		   uint64_t *errors)
{
	auto created = uring_engine::create({});
	if (!created)
		return 0;
	auto engine = std::move(*created);
	auto queue = std::move(*store.open_queue(*engine));
	runner r;
	r.queue = queue.get();
	r.write = write;
	std::vector<slot> slots(depth);
	for (slot &s : slots) {
		s.owner = &r;
		r.start(s);
	}
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	const __kernel_timespec tick{.tv_sec = 0, .tv_nsec = 100'000'000};
	while (std::chrono::steady_clock::now() < end)
		engine->run_once(1, &tick);
	uint64_t counted = r.done;
	r.stop = true;
	uint64_t target = r.done + depth;  // every slot's last request
	for (int i = 0; i < 300 && r.done < target; i++)
		engine->run_once(1, &tick);
	*errors = r.errors;
	queue.reset();
	return counted;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: %s CONF POOL/IMAGE device|queue QUEUES DEPTH SECONDS "
			"randread|randwrite\n", argv[0]);
		return 2;
	}
	const std::string conf = argv[1], target = argv[2], mode = argv[3];
	const unsigned queues = unsigned(atoi(argv[4])), depth = unsigned(atoi(argv[5]));
	const double seconds = atof(argv[6]);
	const bool write = std::string(argv[7]) == "randwrite";

	// The image's size, for a device of exactly that size.
	rados_t cluster;
	rados_ioctx_t io;
	rbd_image_t img;
	uint64_t size = 0;
	std::string pool = target.substr(0, target.find('/'));
	std::string image = target.substr(target.find('/') + 1);
	if (rados_create(&cluster, nullptr) < 0 || rados_conf_read_file(cluster, conf.c_str()) < 0 ||
	    rados_connect(cluster) < 0 || rados_ioctx_create(cluster, pool.c_str(), &io) < 0 ||
	    rbd_open(io, image.c_str(), &img, nullptr) < 0 || rbd_get_size(img, &size) < 0) {
		fprintf(stderr, "cannot open %s\n", target.c_str());
		return 1;
	}
	if (!write) {
		std::vector<char> fill(1 << 20, 'f');
		for (uint64_t at = 0; at < region; at += fill.size())
			rbd_write(img, at, fill.size(), fill.data());
	}
	rbd_close(img);
	rados_ioctx_destroy(io);
	rados_shutdown(cluster);

	backstore_config cfg;
	cfg.subtype = "rbd";
	cfg.cfgstring = target + ";conf=" + conf;
	cfg.dev_size = size;
	cfg.log_prefix = "rbd/bench:";
	rbd_open_options opts;
	opts.handle_per_queue = mode == "queue";
	auto opened = rbd_backstore::open_with(cfg, opts);
	if (!opened) {
		fprintf(stderr, "open: %s\n", opened.error().what().c_str());
		return 1;
	}
	auto store = std::move(*opened);
	rusage before{};
	getrusage(RUSAGE_SELF, &before);
	std::vector<std::thread> threads;
	std::vector<uint64_t> counts(queues), errors(queues);
	for (unsigned q = 0; q < queues; q++)
		threads.emplace_back([&, q] {
			counts[q] = run_queue(*store, depth, write, seconds, &errors[q]);
		});
	uint64_t total = 0, errs = 0;
	for (unsigned q = 0; q < queues; q++) {
		threads[q].join();
		total += counts[q];
		errs += errors[q];
	}
	rusage after{};
	getrusage(RUSAGE_SELF, &after);
	auto us = [](const timeval &t) { return double(t.tv_sec) * 1e6 + double(t.tv_usec); };
	double cpu = us(after.ru_utime) - us(before.ru_utime) + us(after.ru_stime) -
		     us(before.ru_stime);
	// CPU per I/O (this process: our queues and librbd's threads) varies
	// far less with the host's load than IOPS do.
	printf("%s queues=%u depth=%u %s iops=%.0f cpu_us_per_io=%.1f errors=%llu\n",
	       mode.c_str(), queues, depth, write ? "randwrite" : "randread",
	       double(total) / seconds, total ? cpu / double(total) : 0.0,
	       (unsigned long long)errs);
	return errs ? 1 : 0;
}
