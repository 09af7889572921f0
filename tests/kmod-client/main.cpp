// tcmu-mq-client: a minimal TCMU user-space backend for testing the kernel
// side. It finds the tcm-user uio device of one backstore, detects the
// multi-queue ABI (TCMU_MQ_IOC_GET_INFO; ENOTTY = classic single ring),
// maps the region and serves every queue from its own thread, woken by its
// own eventfd, on a RAM disk.
//
//   tcmu-mq-client --name NAME --size BYTES [--uio-wakeup] [--wait S] [--stall-queue Q]
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
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

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
	bool uio_wakeup = false;
	int wait_s = 10;
	int stall_queue = -1;
};

struct region {
	int fd = -1;
	std::string uio;
	uint8_t *map = nullptr;
	tcmu_mq_info info{};
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
		else if (a == "--uio-wakeup")
			o.uio_wakeup = true;
		else
			return std::nullopt;
	}
	if (o.name.empty() || o.size == 0 || o.size % ram_disk::block_size)
		return std::nullopt;
	return o;
}

// The uio name is "tcm-user/<hba>/<device name>/<subtype>/<cfgstring>".
std::string find_uio(const std::string &name)
{
	for (int n = 0; n < 256; n++) {
		std::string uio = "uio" + std::to_string(n);
		std::ifstream f("/sys/class/uio/" + uio + "/name");
		std::string line;
		if (!f || !std::getline(f, line))
			continue;
		if (line.rfind("tcm-user/", 0) != 0)
			continue;
		size_t a = line.find('/', 9);
		size_t b = a == std::string::npos ? a : line.find('/', a + 1);
		if (b != std::string::npos && line.substr(a + 1, b - a - 1) == name)
			return uio;
	}
	return {};
}

uint64_t classic_map_size(const std::string &uio)
{
	std::ifstream f("/sys/class/uio/" + uio + "/maps/map0/size");
	std::string s;
	return f >> s ? std::stoull(s, nullptr, 0) : 0;
}

// Opens and maps the device; fills info for the classic ABI too (1 queue).
bool open_region(const options &o, region &r)
{
	for (int t = 0; r.uio.empty() && t < o.wait_s * 10; t++) {
		r.uio = find_uio(o.name);
		if (r.uio.empty())
			usleep(100000);
	}
	if (r.uio.empty()) {
		std::fprintf(stderr, "no tcm-user uio device named %s\n", o.name.c_str());
		return false;
	}
	r.fd = open(("/dev/" + r.uio).c_str(), O_RDWR | O_CLOEXEC);
	if (r.fd < 0) {
		std::fprintf(stderr, "open /dev/%s: %s\n", r.uio.c_str(), std::strerror(errno));
		return false;
	}
	if (ioctl(r.fd, TCMU_MQ_IOC_GET_INFO, &r.info) == 0) {
		r.mq_abi = true;
	} else if (errno == ENOTTY) {
		r.info.nr_queues = 1;
		r.info.mmap_size = r.info.queue_stride = classic_map_size(r.uio);
	} else {
		std::fprintf(stderr, "TCMU_MQ_IOC_GET_INFO: %s\n", std::strerror(errno));
		return false;
	}
	void *p = mmap(nullptr, r.info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	if (r.info.mmap_size == 0 || p == MAP_FAILED) {
		std::fprintf(stderr, "mmap %llu bytes of /dev/%s: %s\n", r.info.mmap_size, r.uio.c_str(), std::strerror(errno));
		return false;
	}
	r.map = static_cast<uint8_t *>(p);
	if (!r.mq_abi) {
		// Classic layout: the data area follows the command ring.
		auto *mb = reinterpret_cast<tcmu_mailbox *>(r.map);
		r.info.ring_size = uint64_t{mb->cmdr_off} + mb->cmdr_size;
		r.info.data_size = r.info.mmap_size - std::min(r.info.ring_size, r.info.mmap_size);
	}
	return true;
}

bool layout_sane(const region &r)
{
	const tcmu_mq_info &i = r.info;
	if (i.nr_queues < 1 || i.nr_queues > TCMU_MQ_MAX_QUEUES ||
	    i.queue_stride * i.nr_queues != i.mmap_size ||
	    i.ring_size + i.data_size > i.queue_stride) {
		std::fprintf(stderr, "layout: nr_queues %u ring %llu data %llu stride %llu mmap %llu\n",
			     i.nr_queues, i.ring_size, i.data_size, i.queue_stride, i.mmap_size);
		return false;
	}
	for (uint32_t q = 0; i.nr_queues > 1 && q < i.nr_queues; q++) {
		auto *mb = reinterpret_cast<tcmu_mailbox *>(r.map + q * i.queue_stride);
		if (!(mb->flags & TCMU_MAILBOX_FLAG_CAP_MQ)) {
			std::fprintf(stderr, "queue %u: mailbox lacks TCMU_MAILBOX_FLAG_CAP_MQ\n", q);
			return false;
		}
	}
	return true;
}

int bind_eventfd(int uio_fd, uint32_t q)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	tcmu_mq_eventfd e = {q, efd};
	if (efd < 0 || ioctl(uio_fd, TCMU_MQ_IOC_SET_EVENTFD, &e) < 0) {
		std::fprintf(stderr, "queue %u: TCMU_MQ_IOC_SET_EVENTFD: %s\n", q, std::strerror(errno));
		return -1;
	}
	return efd;
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
		std::fprintf(stderr, "usage: %s --name NAME --size BYTES [--uio-wakeup] [--wait S] [--stall-queue Q]\n",
			     argv[0]);
		return 2;
	}
	region r;
	if (!open_region(*opt, r) || !layout_sane(r))
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
	bool use_eventfd = r.mq_abi && !opt->uio_wakeup;
	for (uint32_t q = 0; q < r.info.nr_queues; q++) {
		int efd = use_eventfd ? bind_eventfd(r.fd, q) : -1;
		if (use_eventfd && efd < 0)
			return 1;
		queue_layout l = {r.map + q * r.info.queue_stride, r.info.ring_size, r.info.data_size};
		queues.push_back(std::make_unique<queue_server>(q, l, r.fd, efd, disk, stop, held));
		if (!queues.back()->check_mailbox())
			return 1;
	}
	std::atomic<unsigned> running{static_cast<unsigned>(queues.size())};
	std::vector<std::thread> threads;
	for (auto &s : queues)
		threads.emplace_back([&s, &running] { s->run(); running--; });
	std::printf("ready uio=%s nr_queues=%u abi=%s wakeup=%s pid=%d ring_size=%llu data_size=%llu "
		    "stride=%llu mmap_size=%llu\n", r.uio.c_str(), r.info.nr_queues,
		    r.mq_abi ? "mq" : "classic", use_eventfd ? "eventfd" : "uio", getpid(),
		    (unsigned long long)r.info.ring_size, (unsigned long long)r.info.data_size,
		    (unsigned long long)r.info.queue_stride, (unsigned long long)r.info.mmap_size);
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
