// SPDX-License-Identifier: GPL-2.0-or-later
// tcmud: serves LIO TCMU (user:) backstores.
//
// The main thread is the control thread: it takes over existing devices,
// then follows TCM-USER netlink events and signals. Each device's command
// rings are served by their own worker threads (see queue_worker.h).
#include <getopt.h>
#include "netlink/tcmu_genl_abi.h"
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/device_registry.h"
#include "core/handler_registry.h"
#include "log/log.h"
#include "netlink/tcmu_netlink.h"

namespace tcmud {
namespace {

struct options {
	log_level level = log_level::info;
	device_options device;
};

void usage(FILE *out)
{
	std::fprintf(out,
		"usage: tcmud [options]\n"
		"  -l, --log-level LEVEL     error, warn, info (default) or debug\n"
		"      --max-in-flight N     command slots per queue (default 256)\n"
		"      --uring-entries N     io_uring entries per queue (default 256)\n"
		"  -h, --help                this text\n"
		"  -V, --version             print the version\n"
		"handlers:");
	for (const handler_ops *h : builtin_handlers())
		std::fprintf(out, " %.*s", int(h->subtype.size()), h->subtype.data());
	std::fprintf(out, "\n");
}

bool parse_count(const char *text, size_t lo, size_t hi, size_t &out)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = std::strtoull(text, &end, 10);
	if (errno || !end || *end || v < lo || v > hi)
		return false;
	out = size_t(v);
	return true;
}

// 0 to run, 1 to exit successfully (help/version), 2 on a usage error.
int parse_args(int argc, char **argv, options &o)
{
	static const option longopts[] = {
		{"log-level", required_argument, nullptr, 'l'},
		{"max-in-flight", required_argument, nullptr, 'm'},
		{"uring-entries", required_argument, nullptr, 'u'},
		{"help", no_argument, nullptr, 'h'},
		{"version", no_argument, nullptr, 'V'},
		{},
	};
	int c;
	size_t n = 0;
	while ((c = getopt_long(argc, argv, "l:hV", longopts, nullptr)) != -1) {
		switch (c) {
		case 'l':
			if (!parse_log_level(optarg, &o.level)) {
				std::fprintf(stderr, "tcmud: unknown log level '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			if (!parse_count(optarg, 1, 65536, n)) {
				std::fprintf(stderr, "tcmud: --max-in-flight wants 1..65536\n");
				return 2;
			}
			o.device.max_in_flight = n;
			break;
		case 'u':
			if (!parse_count(optarg, 8, 32768, n)) {
				std::fprintf(stderr, "tcmud: --uring-entries wants 8..32768\n");
				return 2;
			}
			o.device.uring_entries = unsigned(n);
			break;
		case 'h': usage(stdout); return 1;
		case 'V': std::printf("tcmud %s\n", TCMUD_VERSION); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return 0;
}

int handle_event(device_registry &devices, const tcmu_netlink_event &ev)
{
	log_debug("", "netlink: command %u for uio%u (%s)", ev.cmd, ev.minor, ev.uio_name.c_str());
	switch (ev.cmd) {
	case TCMUD_CMD_ADDED_DEVICE:
		return devices.add(ev.minor);
	case TCMUD_CMD_REMOVED_DEVICE:
		return devices.remove(ev.minor);
	case TCMUD_CMD_RECONFIG_DEVICE: {
		auto it = devices.devices().find(ev.minor);
		if (it == devices.devices().end())
			return -ENODEV;
		if (ev.write_cache) {
			it->second->set_write_cache(*ev.write_cache != 0);
			return 0;
		}
		// A new size or cfgstring needs the backstore reopened; refused
		// (the kernel keeps the old value) rather than half applied.
		log_warn(it->second->log_prefix(), "reconfiguration of %s is not supported",
			 ev.dev_size ? "dev_size" : "dev_config");
		return -EOPNOTSUPP;
	}
	}
	return -EINVAL;
}

int serve(const options &o)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	// Blocked before any worker thread exists, so every thread inherits it
	// and only the signalfd sees these signals.
	pthread_sigmask(SIG_BLOCK, &mask, nullptr);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		log_error("", "signalfd: %s", strerror(errno));
		return 1;
	}

	device_registry devices(device_roots{}, o.device);
	int error = 0;
	// Netlink first: a device created while we scan is then not missed.
	auto nl = tcmu_netlink::open(
		[&devices](const tcmu_netlink_event &ev) { return handle_event(devices, ev); }, &error);
	if (!nl)
		log_warn("", "no TCM-USER netlink (%s): serving existing devices only",
			 strerror(-error));
	size_t n = devices.scan();
	log_info("", "tcmud %s ready, serving %zu device(s)", TCMUD_VERSION, n);

	for (;;) {
		pollfd fds[2] = {{sfd, POLLIN, 0}, {nl ? nl->fd() : -1, POLLIN, 0}};
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("", "poll: %s", strerror(errno));
			break;
		}
		if (fds[1].revents & POLLIN && nl->dispatch() == -ENOBUFS)
			devices.scan();
		if (fds[0].revents & POLLIN) {
			signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGHUP) {
				log_info("", "SIGHUP: nothing to reload yet");
				continue;
			}
			log_info("", "%s: stopping", strsignal(int(si.ssi_signo)));
			break;
		}
	}
	devices.remove_all();
	close(sfd);
	log_info("", "stopped");
	return 0;
}

} // namespace
} // namespace tcmud

int main(int argc, char **argv)
{
	tcmud::options o;
	int rc = tcmud::parse_args(argc, argv, o);
	if (rc)
		return rc == 1 ? 0 : 2;
	tcmud::set_log_level(o.level);
	return tcmud::serve(o);
}
