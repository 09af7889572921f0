// SPDX-License-Identifier: GPL-2.0-or-later
// tcmu-mq-client: a minimal TCMU user-space backend for testing the kernel
// side. It finds the tcm-user uio device of one backstore, detects the
// multi-queue ABI (TCMU_MAILBOX_FLAG_CAP_MQ and struct tcmu_mq_mailbox in
// queue 0's mailbox; without them, one classic ring), maps every queue's
// own uio device and serves each queue from its own thread, woken by and
// completing on its own uio device, on a RAM disk.
//
//   tcmu-mq-client --name NAME --size BYTES [--wait S] [--stall-queue Q]
//                  [--serve-queues K]
//   (TCMU_MQ_CLIENT_TRACE=1 in the environment: one stderr line per command)
//
// Prints "ready ..." once serving; SIGUSR1 prints the counters; with
// --stall-queue, SIGUSR2 stalls queue Q (it consumes entries and completes
// none: a hung daemon thread, for the kernel's per-queue timeouts, qfull
// and TMR) or, sent again, lets it complete what it holds; SIGINT or
// SIGTERM, or removal of the device, stops it and prints per-queue counters.
// Exit status 1 if any entry failed a check, a cmd_id came twice while
// outstanding, a completion write failed or a command was left uncompleted.
#include "queue_server.h"
#include "ram_disk.h"
#include "tcmu_abi.h"

#include <linux/target_core_user_mq.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace kmod_client;

namespace {

struct options {
	std::string name;
	uint64_t size = 0;
	int wait_s = 10;
	int stall_queue = -1;
	uint32_t serve_queues = 0; // 0: all
};

// One queue's uio device, mapped: queue 0 is the device's tcm-user device,
// queue q > 0 (multi-queue ABI) the device named tcmu-queue/<hba>/<dev>/<q>.
struct queue_uio {
	int fd = -1;
	std::string uio;
	uint8_t *map = nullptr;
	uint64_t map_size = 0;
};

struct region {
	uint32_t hba = 0;
	std::vector<queue_uio> queues;
	bool mq_abi = false;
};

std::optional<options> parse(int argc, char **argv)
{
	options o;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		bool has_value = i + 1 < argc;
		if (a == "--name" && has_value)
			o.name = argv[++i];
		else if (a == "--size" && has_value)
			o.size = std::stoull(argv[++i], nullptr, 0);
		else if (a == "--wait" && has_value)
			o.wait_s = std::stoi(argv[++i]);
		else if (a == "--stall-queue" && has_value)
			o.stall_queue = std::stoi(argv[++i]);
		else if (a == "--serve-queues" && has_value)
			o.serve_queues = static_cast<uint32_t>(std::stoul(argv[++i]));
		else
			return std::nullopt;
	}
	if (o.name.empty() || o.size == 0 || o.size % ram_disk::block_size)
		return std::nullopt;
	return o;
}

std::string read_line(const std::string &path)
{
	std::ifstream f(path);
	std::string line;
	std::getline(f, line);
	return line;
}

// The tcm-user uio device of backstore `name` ("tcm-user/<hba>/<name>/...")
// and its hba.
std::string find_uio(const std::string &name, uint32_t *hba)
{
	for (int n = 0; n < 256; n++) {
		std::string uio = "uio" + std::to_string(n);
		std::string line = read_line("/sys/class/uio/" + uio + "/name");
		if (line.rfind("tcm-user/", 0) != 0)
			continue;
		size_t a = line.find('/', 9);
		size_t b = a == std::string::npos ? a : line.find('/', a + 1);
		if (b != std::string::npos && line.substr(a + 1, b - a - 1) == name) {
			*hba = static_cast<uint32_t>(std::stoul(line.substr(9, a - 9)));
			return uio;
		}
	}
	return {};
}

std::string find_queue_uio(uint32_t hba, const std::string &name, uint32_t q)
{
	std::string want = "tcmu-queue/" + std::to_string(hba) + "/" + name + "/" + std::to_string(q);
	for (int n = 0; n < 256; n++) {
		std::string uio = "uio" + std::to_string(n);
		if (read_line("/sys/class/uio/" + uio + "/name") == want)
			return uio;
	}
	return {};
}

bool map_uio(queue_uio &u)
{
	std::string size = read_line("/sys/class/uio/" + u.uio + "/maps/map0/size");
	u.map_size = size.empty() ? 0 : std::stoull(size, nullptr, 0);
	u.fd = open(("/dev/" + u.uio).c_str(), O_RDWR | O_CLOEXEC);
	if (u.fd < 0) {
		std::fprintf(stderr, "open /dev/%s: %s\n", u.uio.c_str(), std::strerror(errno));
		return false;
	}
	void *p = mmap(nullptr, u.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, u.fd, 0);
	if (u.map_size == 0 || p == MAP_FAILED) {
		std::fprintf(stderr, "mmap %llu bytes of /dev/%s: %s\n",
			     (unsigned long long)u.map_size, u.uio.c_str(), std::strerror(errno));
		return false;
	}
	u.map = static_cast<uint8_t *>(p);
	return true;
}

// The multi-queue mailbox extension, or nullptr on a classic mailbox.
const tcmu_mq_mailbox *mq_mailbox(const queue_uio &u)
{
	auto *mb = reinterpret_cast<const tcmu_mailbox *>(u.map);
	if (!(mb->flags & TCMU_MAILBOX_FLAG_CAP_MQ))
		return nullptr;
	return reinterpret_cast<const tcmu_mq_mailbox *>(u.map + TCMU_MQ_MAILBOX_OFF);
}

// Opens and maps queue 0; with TCMU_MAILBOX_FLAG_CAP_MQ in its mailbox, the
// other queues' uio devices too, each checked to be the queue it claims.
bool open_region(const options &o, region &r)
{
	queue_uio q0;
	for (int t = 0; q0.uio.empty() && t < o.wait_s * 10; t++) {
		q0.uio = find_uio(o.name, &r.hba);
		if (q0.uio.empty())
			usleep(100000);
	}
	if (q0.uio.empty()) {
		std::fprintf(stderr, "no tcm-user uio device named %s\n", o.name.c_str());
		return false;
	}
	if (!map_uio(q0))
		return false;
	r.queues.push_back(q0);
	const tcmu_mq_mailbox *mq = mq_mailbox(q0);
	r.mq_abi = mq != nullptr;
	uint32_t n = mq ? mq->nr_queues : 1;
	if (mq && (n < 2 || n > TCMU_MQ_MAX_QUEUES || mq->queue != 0)) {
		std::fprintf(stderr, "queue 0 mailbox says queue %u of %u\n", mq->queue, n);
		return false;
	}
	// --serve-queues K: open only queues 0..K-1, as a daemon that serves
	// some queues (the others' uio devices are never opened).
	uint32_t open_n = o.serve_queues ? std::min(n, o.serve_queues) : n;
	for (uint32_t q = 1; q < open_n; q++) {
		queue_uio u;
		u.uio = find_queue_uio(r.hba, o.name, q);
		if (u.uio.empty()) {
			std::fprintf(stderr, "queue %u: no uio device tcmu-queue/%u/%s/%u\n", q, r.hba,
				     o.name.c_str(), q);
			return false;
		}
		if (!map_uio(u))
			return false;
		const tcmu_mq_mailbox *m = mq_mailbox(u);
		if (!m || m->nr_queues != n || m->queue != q) {
			std::fprintf(stderr, "queue %u: /dev/%s's mailbox does not say queue %u of %u\n",
				     q, u.uio.c_str(), q, n);
			return false;
		}
		r.queues.push_back(u);
	}
	return true;
}

// Classic layout within each queue's mapping: the data area follows the
// command ring.
queue_layout layout_of(const queue_uio &u)
{
	auto *mb = reinterpret_cast<tcmu_mailbox *>(u.map);
	uint64_t ring = uint64_t{mb->cmdr_off} + mb->cmdr_size;
	return {u.map, ring, u.map_size - std::min(ring, u.map_size)};
}

void print_stats(const char *what, const std::vector<std::unique_ptr<queue_server>> &qs)
{
	uint64_t rx = 0, done = 0;
	unsigned busy = 0;
	for (const auto &s : qs) {
		const queue_stats &st = s->stats();
		std::printf("%s queue %u: received=%lu completed=%lu held=%lu tmr=%lu tmr_ids=%lu wakeups=%lu "
			    "empty_wakeups=%lu batches=%lu duplicates=%lu bad=%lu write_errors=%lu unserved=%lu "
			    "head=%u seen=%u tail=%u\n",
			    what, s->index(), st.received.load(), st.completed.load(), st.held.load(),
			    st.tmr.load(), st.tmr_ids.load(),
			    st.wakeups.load(), st.empty_wakeups.load(), st.batches.load(), st.duplicates.load(),
			    st.bad_entries.load(), st.write_errors.load(), st.unserved.load(),
			    s->kernel_head(), st.seen.load(), st.tail.load());
		rx += st.received;
		done += st.completed;
		busy += st.received > 0;
	}
	std::printf("%s total: received=%lu completed=%lu queues_used=%u/%zu\n", what, rx, done,
		    busy, qs.size());
	std::fflush(stdout);
}

bool all_clean(const std::vector<std::unique_ptr<queue_server>> &qs)
{
	for (const auto &s : qs) {
		const queue_stats &st = s->stats();
		if (st.duplicates || st.bad_entries || st.write_errors ||
		    st.received != st.completed)
			return false;
	}
	return true;
}

}  // namespace

int main(int argc, char **argv)
{
	auto opt = parse(argc, argv);
	if (!opt) {
		std::fprintf(stderr, "usage: %s --name NAME --size BYTES [--wait S] [--stall-queue Q] "
			     "[--serve-queues K]\n",
			     argv[0]);
		return 2;
	}
	region r;
	if (!open_region(*opt, r))
		return 1;
	ram_disk disk(opt->size);
	if (!disk.ok()) {
		std::fprintf(stderr, "cannot map a %llu-byte RAM disk\n", (unsigned long long)opt->size);
		return 1;
	}
	// Signals go to the main thread only (sigtimedwait below).
	sigset_t sigs;
	sigemptyset(&sigs);
	for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2})
		sigaddset(&sigs, s);
	pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

	std::atomic<bool> stop{false};
	std::atomic<int> held{-1};
	std::vector<std::unique_ptr<queue_server>> queues;
	for (uint32_t q = 0; q < r.queues.size(); q++) {
		queues.push_back(std::make_unique<queue_server>(q, layout_of(r.queues[q]),
								r.queues[q].fd, disk, stop, held));
		if (!queues.back()->check_mailbox())
			return 1;
	}
	std::atomic<unsigned> running{static_cast<unsigned>(queues.size())};
	std::vector<std::thread> threads;
	for (auto &s : queues)
		threads.emplace_back([&s, &running] { s->run(); running--; });
	std::string uios;
	for (const auto &u : r.queues)
		uios += (uios.empty() ? "" : ",") + u.uio;
	const queue_layout l0 = layout_of(r.queues[0]);
	std::printf("ready uio=%s nr_queues=%zu abi=%s pid=%d ring_size=%llu data_size=%llu "
		    "map_size=%llu\n", uios.c_str(), r.queues.size(), r.mq_abi ? "mq" : "classic",
		    getpid(), (unsigned long long)l0.ring_size, (unsigned long long)l0.data_size,
		    (unsigned long long)r.queues[0].map_size);
	std::fflush(stdout);

	timespec tick = {0, 200 * 1000 * 1000};
	while (running.load() == queues.size()) {
		int sig = sigtimedwait(&sigs, nullptr, &tick);
		if (sig == SIGUSR1) {
			print_stats("stats", queues);
		} else if (sig == SIGUSR2 && opt->stall_queue >= 0) {
			held = held < 0 ? opt->stall_queue : -1;
			std::printf("stall queue %d: %s\n", opt->stall_queue, held < 0 ? "released" : "held");
			std::fflush(stdout);
		}
		else if (sig == SIGINT || sig == SIGTERM)
			break;
	}
	stop = true;
	for (auto &t : threads)
		t.join();
	print_stats("final", queues);
	bool clean = all_clean(queues);
	std::printf("exit %s\n", clean ? "clean" : "with errors");
	return clean ? 0 : 1;
}
