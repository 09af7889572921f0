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
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "config/daemon_config.h"
#include "config/sd_notify.h"
#include "control/control_client.h"
#include "control/control_server.h"
#include "core/device_registry.h"
#include "core/device_reports.h"
#include "handler_registry.h"
#include "core/instance_lock.h"
#include "core/log_file.h"
#include "core/tcmu_device.h"
#include "core/worker_watchdog.h"
#include "dbus/dbus_service.h"
#include "log/log.h"
#include "scsi/copy_targets.h"
#include "stats/latency_clock.h"
#include "netlink/tcmu_netlink.h"
#include "tcmud/defaults.h"
#include "tcmud/setup_result.h"
#include "tcmud/unique_fd.h"

namespace tcmud {
namespace {

// The command line: what is set here wins over the configuration files.
struct options {
	daemon_config cli;
	config_paths paths;
	bool check_config = false; // --check-config: read the files, touch nothing
	size_t nofile = 0;         // -f N (tcmu-runner's): RLIMIT_NOFILE to N
};

// What the daemon runs with: defaults, then tcmu.conf, tcmud.conf, options.
struct settings {
	log_level level = log_level::info;
	std::string log_dir;
	device_options device;
	bool dbus = true;
	std::string control_socket = control::default_socket_path; // "none": off
	copy_group_set copy_groups;  // none: copies stay inside one device
};

settings resolve(const daemon_config &c)
{
	settings s;
	s.level = c.level.value_or(s.level);
	s.log_dir = c.log_dir.value_or(default_log_dir);
	s.device.max_in_flight = c.max_in_flight.value_or(s.device.max_in_flight);
	s.device.uring_entries = c.uring_entries.value_or(s.device.uring_entries);
	if (c.max_transfer_kb)
		s.device.max_transfer_bytes = *c.max_transfer_kb << 10;
	s.device.placement = c.queue_cpus.value_or(s.device.placement);
	s.device.fixed_buffers = c.fixed_buffers.value_or(s.device.fixed_buffers);
	s.dbus = c.dbus.value_or(true);
	s.control_socket = c.control_socket.value_or(s.control_socket);
	s.copy_groups = c.copy_groups.value_or(s.copy_groups);
	return s;
}

// Reads the files and merges the command line over them. False (with every
// problem logged as file:line, and appended to *problems when given) if a
// file is invalid.
bool load_settings(const options &o, settings &out, std::vector<std::string> *problems = nullptr)
{
	daemon_config cfg;
	std::vector<std::string> errors;
	bool ok = load_daemon_config(o.paths, &cfg, &errors);
	for (const std::string &e : errors)
		log_error("", "%s", e.c_str());
	if (problems)
		problems->insert(problems->end(), errors.begin(), errors.end());
	if (!ok)
		return false;
	cfg.merge_from(o.cli);
	out = resolve(cfg);
	return true;
}

void apply_logging(const settings &s)
{
	set_log_level(s.level);
	if (auto opened = set_log_dir(s.log_dir); !opened)
		log_error("", "%s; logging to stderr only", opened.error().what().c_str());
}

// Which devices EXTENDED COPY may move data between: at once, for running
// devices too (a copy already under way runs on), because it is an access
// decision and an administrator who narrows it expects it to hold now.
void apply_copy_groups(const settings &s)
{
	if (s.copy_groups.groups.empty())
		scsi::copy_target_registry::global().set_policy({});
	else
		scsi::copy_target_registry::global().set_policy(
			[groups = s.copy_groups](const scsi::copy_member &a,
						 const scsi::copy_member &b) {
				return groups.share_group(a.hba, a.device, b.hba, b.device);
			});
	log_info("", "copy_groups: %s%s", to_string(s.copy_groups).c_str(),
		 s.copy_groups.groups.empty() ? " (EXTENDED COPY stays inside each device)" : "");
}

void usage(FILE *out)
{
	std::fprintf(out,
		"usage: tcmud [options]\n"
		"  -c, --config PATH         configuration file (default /etc/tcmud/tcmud.conf;\n"
		"                            /etc/tcmu/tcmu.conf's log_level and log_dir are read too)\n"
		"  -l, --log-level LEVEL     error, warn, info (default) or debug\n"
		"      --log-dir DIR         log to DIR/tcmud.log as well as stderr (default %s)\n"
		"      --max-in-flight N     command slots per queue (default %zu)\n"
		"      --uring-entries N     io_uring entries per queue (default %u)\n"
		"      --queue-cpus WHERE    auto (default), none or a CPU list like 0-3,8:\n"
		"                            which CPU each queue's worker runs on\n"
		"      --no-dbus             do not serve org.kernel.TCMUService1\n"
		"      --control-socket PATH tcmudctl's socket (default %s;\n"
		"                            none: no socket)\n"
		"      --check-config [FILE] check FILE (default: the files above) and exit:\n"
		"                            0 valid, 1 not; touches no device\n"
		"  tcmu-runner's, for existing unit overrides and scripts:\n"
		"  -d, --debug               --log-level debug\n"
		"      --tcmu-log-dir DIR    --log-dir DIR (so is -l DIR: an absolute path)\n"
		"  -f, --nofile N            raise RLIMIT_NOFILE to N\n"
		"      --handler-path DIR    accepted and ignored: handlers are built in\n"
		"  -h, --help                this text\n"
		"  -V, --version             print the version\n"
		"tcmud.conf only: max_transfer_kb (default %u)\n"
		"handlers:", default_log_dir, default_max_in_flight, default_uring_entries,
		default_control_socket, default_max_transfer_kb);
	for (const handler_ops *h : builtin_handlers())
		std::fprintf(out, " %.*s", int(h->subtype.size()), h->subtype.data());
	std::fprintf(out, "\n");
}

// A number from lo to hi; nullopt for anything else.
std::optional<size_t> parse_count(const char *text, size_t lo, size_t hi)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = std::strtoull(text, &end, 10);
	if (errno || !end || *end || v < lo || v > hi)
		return std::nullopt;
	return size_t(v);
}

// 0 to run, 1 to exit successfully (help/version), 2 on a usage error.
int parse_args(int argc, char **argv, options &o)
{
	static const option longopts[] = {
		{"config", required_argument, nullptr, 'c'},
		{"log-level", required_argument, nullptr, 'l'},
		{"log-dir", required_argument, nullptr, 'L'},
		{"no-dbus", no_argument, nullptr, 'n'},
		{"control-socket", required_argument, nullptr, 'S'},
		{"max-in-flight", required_argument, nullptr, 'm'},
		{"uring-entries", required_argument, nullptr, 'u'},
		{"queue-cpus", required_argument, nullptr, 'q'},
		{"check-config", no_argument, nullptr, 'C'},
		{"debug", no_argument, nullptr, 'd'},
		{"tcmu-log-dir", required_argument, nullptr, 'L'},
		{"nofile", required_argument, nullptr, 'f'},
		{"handler-path", required_argument, nullptr, 'H'},
		{"help", no_argument, nullptr, 'h'},
		{"version", no_argument, nullptr, 'V'},
		{},
	};
	int c;
	while ((c = getopt_long(argc, argv, "c:l:df:hV", longopts, nullptr)) != -1) {
		switch (c) {
		case 'c':
			o.paths.tcmud_conf = optarg;
			o.paths.tcmud_conf_required = true;
			break;
		case 'l':
			// tcmu-runner's -l is its log directory; a level is
			// never an absolute path, so both meanings fit.
			if (optarg[0] == '/') {
				o.cli.log_dir = optarg;
				break;
			}
			o.cli.level = parse_log_level(optarg);
			if (!o.cli.level) {
				std::fprintf(stderr, "tcmud: unknown log level '%s' (or, as "
					     "tcmu-runner's -l, an absolute log directory)\n", optarg);
				return 2;
			}
			break;
		case 'd': o.cli.level = log_level::debug; break;
		case 'L': o.cli.log_dir = optarg; break;
		case 'f': {
			auto n = parse_count(optarg, 64, 1 << 30);
			if (!n) {
				std::fprintf(stderr, "tcmud: --nofile wants a number of files, "
					     "64..%d\n", 1 << 30);
				return 2;
			}
			o.nofile = *n;
			break;
		}
		case 'H':
			std::fprintf(stderr, "tcmud: --handler-path %s ignored: tcmud's handlers "
				     "are built in\n", optarg);
			break;
		case 'n': o.cli.dbus = false; break;
		case 'S':
			if (auto checked = check_control_socket(optarg); !checked) {
				std::fprintf(stderr, "tcmud: --control-socket: %s\n",
					     checked.error().message.c_str());
				return 2;
			}
			o.cli.control_socket = optarg;
			break;
		case 'm':
			o.cli.max_in_flight = parse_count(optarg, 1, 65535);
			if (!o.cli.max_in_flight) {
				std::fprintf(stderr, "tcmud: --max-in-flight wants 1..65535\n");
				return 2;
			}
			break;
		case 'u': {
			auto n = parse_count(optarg, 8, 32768);
			if (!n) {
				std::fprintf(stderr, "tcmud: --uring-entries wants 8..32768\n");
				return 2;
			}
			o.cli.uring_entries = unsigned(*n);
			break;
		}
		case 'q': {
			auto p = parse_queue_placement(optarg);
			if (!p) {
				std::fprintf(stderr, "tcmud: --queue-cpus: %s (want auto, none or a "
					     "list like 0-3,8)\n", p.error().message.c_str());
				return 2;
			}
			o.cli.queue_cpus = std::move(*p);
			break;
		}
		case 'C': o.check_config = true; break;
		case 'h': usage(stdout); return 1;
		case 'V': std::printf("tcmud %s\n", TCMUD_VERSION); return 1;
		default: usage(stderr); return 2;
		}
	}
	// --check-config FILE: the one operand there is.
	if (o.check_config && optind == argc - 1) {
		o.paths.tcmud_conf = argv[optind++];
		o.paths.tcmud_conf_required = true;
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return 0;
}

// --check-config: what a reload would say, without a daemon. Each problem
// is on stderr as "FILE:LINE: what is wrong".
int check_config_only(const options &o)
{
	settings s;
	if (!load_settings(o, s)) {
		std::fprintf(stderr, "tcmud: %s: not valid; a running tcmud would refuse it\n",
			     o.paths.tcmud_conf.c_str());
		return 1;
	}
	std::printf("tcmud: %s: valid (with %s's log settings where it has them)\n",
		    o.paths.tcmud_conf.c_str(), o.paths.tcmu_conf.c_str());
	// What a daemon started with these options would run with.
	std::string_view level = log_level_name(s.level);
	std::printf("log_level = %.*s\nlog_dir = %s\ncontrol_socket = %s\ndbus = %s\n"
		    "max_in_flight = %zu\nuring_entries = %u\n",
		    int(level.size()), level.data(), s.log_dir.c_str(), s.control_socket.c_str(),
		    s.dbus ? "true" : "false", s.device.max_in_flight, s.device.uring_entries);
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
		tcmu_device &dev = *it->second;
		if (ev.write_cache) {
			dev.set_write_cache(*ev.write_cache != 0);
			return 0;
		}
		// rtslib writes dev_config and dev_size again when it restores a
		// saved configuration: the same value is no change at all.
		if (ev.dev_size && *ev.dev_size == dev.size_bytes())
			return 0;
		if (ev.dev_size) {
			auto resized = dev.resize(*ev.dev_size);
			if (resized)
				return 0;
			log_error(dev.log_prefix(), "%s", resized.error().what().c_str());
			return resized.error().negative_errno();
		}
		if (ev.dev_cfg && *ev.dev_cfg == dev.dev_config())
			return 0;
		// A new cfgstring means another backing file: refused (the kernel
		// keeps the old value) rather than swapped under running I/O.
		log_warn(dev.log_prefix(), "changing dev_config of a running device is not "
			 "supported; remove and re-create the backstore");
		return -EOPNOTSUPP;
	}
	}
	return -EINVAL;
}

// SIGHUP or tcmudctl reload: re-read the files. Logging changes at once;
// slot and ring sizes and queue placement apply to devices added from now on
// (a running queue keeps its rings). An invalid file changes nothing: I/O
// never stops for a typo. Returns "" when the new configuration is in force,
// else why not (what `tcmudctl reload`, and so `systemctl reload`, reports).
std::string reload(const options &o, settings &current, device_registry &devices)
{
	sd_notify_state("RELOADING=1");
	settings next;
	std::vector<std::string> problems;
	std::string refused;
	if (load_settings(o, next, &problems)) {
		apply_logging(next);
		apply_copy_groups(next);
		if (next.dbus != current.dbus)
			log_warn("", "the dbus setting changes only at restart");
		next.dbus = current.dbus;
		if (next.control_socket != current.control_socket)
			log_warn("", "the control_socket setting changes only at restart");
		next.control_socket = current.control_socket;
		current = next;
		devices.set_options(current.device);
		log_info("", "configuration reloaded (new devices: max_in_flight %zu, "
			 "uring_entries %u)", current.device.max_in_flight,
			 current.device.uring_entries);
	} else {
		log_error("", "configuration not reloaded; keeping the running one");
		refused = "configuration not reloaded (the running one stays):";
		for (const std::string &p : problems)
			refused += " " + p + ";";
		refused.pop_back();
	}
	sd_notify_state("READY=1");
	return refused;
}

// The watchdog's test hook: with TCMUD_TEST_HOOKS=1 in the environment,
// SIGUSR1 hangs queue 0 of every device for an hour, as a worker stuck in a
// bug would; otherwise it is ignored. Never set in tcmud.service.
void stall_first_queues_for_test(device_registry &devices)
{
	const char *hooks = getenv("TCMUD_TEST_HOOKS");
	if (!hooks || std::string_view(hooks) != "1") {
		log_warn("", "SIGUSR1 ignored (test hooks are off)");
		return;
	}
	for (const auto &[minor, dev] : devices.devices())
		if (!dev->queues().empty())
			dev->queues().front()->stall_for_test(3'600'000);
}

// SIGTERM, SIGINT, SIGHUP and SIGUSR1 (the watchdog's test hook) blocked
// and read from a signalfd. Blocked before any worker thread exists, so
// every thread, GDBus's included, inherits the mask and only the signalfd
// sees these signals.
setup_result<unique_fd> open_signalfd()
{
	sigset_t mask;
	sigemptyset(&mask);
	for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1})
		sigaddset(&mask, sig);
	// pthread_sigmask returns the error number; it sets no errno.
	if (int err = pthread_sigmask(SIG_BLOCK, &mask, nullptr))
		return setup_error{err, "cannot block SIGTERM, SIGINT, SIGHUP and SIGUSR1"};
	unique_fd sfd(signalfd(-1, &mask, SFD_CLOEXEC));
	if (!sfd)
		return setup_error{errno, "cannot open a signalfd for SIGTERM, SIGINT, SIGHUP "
					  "and SIGUSR1"};
	return sfd;
}

// The control plane around the device registry; each part is optional:
// without it tcmud still serves I/O, and says what is missing.
struct services {
	std::unique_ptr<tcmu_netlink> netlink;
	std::unique_ptr<dbus_service> dbus;
	std::unique_ptr<control::control_server> control;
};

// Netlink, opened before the scan so that a device created meanwhile is not
// missed, then the scan itself: how many devices were taken over.
size_t open_netlink_and_scan(device_registry &devices, services &sv)
{
	auto opened = tcmu_netlink::open(
		[&devices](const tcmu_netlink_event &ev) { return handle_event(devices, ev); });
	if (opened)
		sv.netlink = std::move(*opened);
	if (!sv.netlink)
		log_warn("", "no TCM-USER netlink (%s): serving existing devices only",
			 opened.error().what().c_str());
	else
		devices.set_missed_add_answer(
			[nl = sv.netlink.get()](uint32_t id, const std::string &name, int rc) {
				nl->answer_missed_add(id, name, rc);
			});
	return devices.scan();
}

// D-Bus for targetcli and the control socket for tcmudctl, as configured.
void open_control_plane(const options &o, settings &s, device_registry &devices, services &sv)
{
	if (s.dbus) {
		auto started = dbus_service::start(builtin_handlers());
		if (started)
			sv.dbus = std::move(*started);
		else
			log_warn("", "no D-Bus service (%s): targetcli will not list user: backstores",
				 started.error().what().c_str());
	}
	if (s.control_socket != "none") {
		auto opened = control::control_server::open(
			s.control_socket,
			[&devices](bool with_stats) { return device_reports(devices, with_stats); });
		// Statistics are not worth refusing I/O over.
		if (opened) {
			sv.control = std::move(*opened);
			// Served on this (the control) thread, as SIGHUP is.
			sv.control->on_reload(
				[&o, &s, &devices] { return reload(o, s, devices); });
			sv.control->identify_as(TCMUD_VERSION);
		}
		else
			log_warn("", "no control socket (%s): tcmudctl will not reach this daemon",
				 opened.error().what().c_str());
	}
}

// One signal from the signalfd: true when it asks tcmud to stop.
bool handle_signal(int sfd, const options &o, settings &s, device_registry &devices)
{
	signalfd_siginfo si;
	if (read(sfd, &si, sizeof(si)) != sizeof(si))
		return false;
	switch (si.ssi_signo) {
	case SIGHUP:
		(void)reload(o, s, devices);
		return false;
	case SIGUSR1:
		stall_first_queues_for_test(devices);
		return false;
	default:
		log_info("", "%s: stopping", strsignal(int(si.ssi_signo)));
		return true;
	}
}

// The control thread's loop: signals, netlink events, control requests and
// the watchdog's ticks, until a stop signal (or a poll failure).
void run_control_loop(int sfd, const options &o, settings &s, device_registry &devices,
		      services &sv)
{
	worker_watchdog watchdog(sd_watchdog_usec(), devices);
	devices.set_busy_notice([&watchdog](uint64_t ms) { watchdog.control_busy_for(ms); });
	struct forget_notice {
		device_registry &d;
		~forget_notice() { d.set_busy_notice({}); }
	} forget{devices};
	for (;;) {
		pollfd fds[3] = {{sfd, POLLIN, 0},
				 {sv.netlink ? sv.netlink->fd() : -1, POLLIN, 0},
				 {sv.control ? sv.control->fd() : -1, POLLIN, 0}};
		int polled = poll(fds, 3, watchdog.poll_timeout_ms());
		watchdog.control_loop_ran();
		if (polled < 0) {
			int err = errno;
			if (err == EINTR)
				continue;
			log_error("", "poll: %s", strerror(err));
			return;
		}
		if (fds[1].revents & POLLIN && sv.netlink->dispatch() == -ENOBUFS)
			devices.scan();
		if (fds[2].revents & POLLIN)
			sv.control->dispatch();
		if (fds[0].revents & POLLIN && handle_signal(sfd, o, s, devices))
			return;
	}
}

int serve(const options &o, settings s)
{
	auto signals = open_signalfd();
	if (!signals) {
		log_error("", "%s", signals.error().what().c_str());
		return 1;
	}
	unique_fd sfd = std::move(*signals);
	latency_clock::calibrate();
	if (latency_clock::uses_tsc())
		log_info("", "command latencies: timed with the TSC, the kernel's clocksource "
			 "(%.3f ticks per ns)", latency_clock::ticks_per_ns());
	else
		log_info("", "command latencies: timed with CLOCK_MONOTONIC (the kernel's "
			 "clocksource is not the TSC)");
	device_roots roots;
	// systemd's StateDirectory= makes it; started by hand, tcmud does. A
	// failure only costs the backing-file records (logged per device).
	if (mkdir(roots.state.c_str(), 0700) < 0 && errno != EEXIST)
		log_warn("", "cannot create %s: %s", roots.state.c_str(), strerror(errno));
	device_registry devices(roots, s.device);
	services sv;
	size_t n = open_netlink_and_scan(devices, sv);
	open_control_plane(o, s, devices, sv);
	log_info("", "tcmud %s ready, serving %zu device(s)", TCMUD_VERSION, n);
	sd_notify_state("READY=1");

	run_control_loop(sfd.get(), o, s, devices, sv);

	sd_notify_state("STOPPING=1");
	// Requests and targetcli first, so nothing asks about a device going away.
	sv.control.reset();
	sv.dbus.reset();
	devices.remove_all();
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
	// tcmu-runner's TCMU_LOGDIR: under the command line, over the files.
	if (const char *dir = getenv("TCMU_LOGDIR"); dir && *dir && !o.cli.log_dir)
		o.cli.log_dir = dir;
	if (o.check_config)
		return tcmud::check_config_only(o);
	if (o.nofile) {
		rlimit lim{rlim_t(o.nofile), rlim_t(o.nofile)};
		if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
			std::fprintf(stderr, "tcmud: --nofile %zu: %s\n", o.nofile, strerror(errno));
	}
	tcmud::settings s;
	if (!tcmud::load_settings(o, s))
		return 2;
	// Before any device is touched, and before the log file is opened: a
	// refused second daemon leaves the running one's log alone.
	auto lock = tcmud::instance_lock::take(tcmud::default_instance_lock_path,
					       tcmud::previous_holder_wait_ms);
	if (!lock) {
		tcmud::log_error("", "%s", lock.error().what().c_str());
		return 1;
	}
	tcmud::apply_logging(s);
	tcmud::apply_copy_groups(s);
	return tcmud::serve(o, s);
}
