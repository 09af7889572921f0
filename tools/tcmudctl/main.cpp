// SPDX-License-Identifier: GPL-2.0-or-later
// tcmudctl: what a running tcmud serves, and how fast.
//
//   tcmudctl [--socket PATH] list [--json]
//   tcmudctl [--socket PATH] stats [DEVICE] [--interval S] [--count N] [--json]
//   tcmudctl [--socket PATH] metrics [--textfile PATH [--interval S] [--count N]]
//   tcmudctl [--socket PATH] metrics --http      (one scrape on stdin/stdout)
//   tcmudctl [--socket PATH] reload [--pid PID]
//
// Statistics are counters in the daemon; rates come from two snapshots taken
// --interval seconds apart (the daemon's clock), so one report costs one
// interval of waiting.
#include <getopt.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "control/control_client.h"
#include "http_metrics.h"
#include "prometheus.h"
#include "stats_view.h"

namespace tcmud::ctl {
namespace {

struct args {
	std::string socket = control::default_socket_path;
	std::string command;
	std::string device;
	double interval_s = 1.0;
	long count = 1; // 0: until interrupted
	bool json = false;
	std::string textfile;
	bool http = false; // metrics: answer one HTTP request on stdin/stdout
	long pid = 0; // reload: SIGHUP this pid when the socket is not there
};

void usage(FILE *out)
{
	std::fprintf(out,
		"usage: tcmudctl [--socket PATH] list [--json]\n"
		"       tcmudctl [--socket PATH] stats [DEVICE] [--interval S] [--count N] [--json]\n"
		"       tcmudctl [--socket PATH] metrics [--textfile PATH [--interval S] [--count N]]\n"
		"       tcmudctl [--socket PATH] metrics --http\n"
		"       tcmudctl [--socket PATH] reload [--pid PID]\n"
		"  -s, --socket PATH    tcmud's control socket (default %s)\n"
		"  -i, --interval S     seconds between the two snapshots of a report (default 1)\n"
		"  -c, --count N        reports to print, 0 for until interrupted (default 1)\n"
		"  -j, --json           one JSON object per line\n"
		"  -t, --textfile PATH  metrics: write PATH (atomically, for node_exporter's\n"
		"                       textfile collector) every --interval S, --count times\n"
		"      --http           metrics: answer one HTTP request (GET /metrics) read from\n"
		"                       stdin on stdout: systemd's tcmud-metrics.socket\n"
		"  -p, --pid PID        reload: when the socket is not there (control_socket\n"
		"                       = none), send PID SIGHUP instead (result: the log)\n"
		"  -h, --help           this text\n",
		control::default_socket_path);
}

// 0 to run, 1 for --help, 2 for a usage error.
int parse_args(int argc, char **argv, args &a)
{
	static const option longopts[] = {
		{"socket", required_argument, nullptr, 's'},
		{"interval", required_argument, nullptr, 'i'},
		{"count", required_argument, nullptr, 'c'},
		{"json", no_argument, nullptr, 'j'},
		{"textfile", required_argument, nullptr, 't'},
		{"pid", required_argument, nullptr, 'p'},
		{"http", no_argument, nullptr, 'H'},
		{"help", no_argument, nullptr, 'h'},
		{},
	};
	int c;
	char *end = nullptr;
	// '+' would stop at the first operand; options may follow the command.
	while ((c = getopt_long(argc, argv, "s:i:c:jt:p:h", longopts, nullptr)) != -1) {
		switch (c) {
		case 's': a.socket = optarg; break;
		case 'i':
			errno = 0;
			a.interval_s = std::strtod(optarg, &end);
			if (errno || *end || !(a.interval_s >= 0.01 && a.interval_s <= 86400)) {
				std::fprintf(stderr, "tcmudctl: --interval wants seconds, 0.01..86400\n");
				return 2;
			}
			break;
		case 'c':
			errno = 0;
			a.count = std::strtol(optarg, &end, 10);
			if (errno || *end || a.count < 0) {
				std::fprintf(stderr, "tcmudctl: --count wants a number >= 0\n");
				return 2;
			}
			break;
		case 'j': a.json = true; break;
		case 't': a.textfile = optarg; break;
		case 'H': a.http = true; break;
		case 'p':
			errno = 0;
			a.pid = std::strtol(optarg, &end, 10);
			if (errno || *end || a.pid <= 1) {
				std::fprintf(stderr, "tcmudctl: --pid wants a process id\n");
				return 2;
			}
			break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	a.command = argv[optind++];
	if (a.command == "stats" && optind < argc)
		a.device = argv[optind++];
	if (optind != argc ||
	    (a.command != "list" && a.command != "stats" && a.command != "metrics" &&
	     a.command != "reload")) {
		usage(stderr);
		return 2;
	}
	if (a.pid && a.command != "reload") {
		std::fprintf(stderr, "tcmudctl: --pid goes with reload only\n");
		return 2;
	}
	if (a.http && (a.command != "metrics" || !a.textfile.empty())) {
		std::fprintf(stderr, "tcmudctl: --http goes with metrics, without --textfile\n");
		return 2;
	}
	if (!a.textfile.empty() && (a.command != "metrics" || a.textfile[0] != '/')) {
		std::fprintf(stderr, "tcmudctl: --textfile wants an absolute path, with metrics\n");
		return 2;
	}
	return 0;
}

// Says why on stderr; tcmudctl's exit status for a failure.
int fail(const setup_error &e)
{
	std::fprintf(stderr, "tcmudctl: %s\n", e.what().c_str());
	return 1;
}

int run_list(control::control_client &client, const args &a)
{
	control::control_request req{control::control_request::kind::list, {}};
	auto line = client.request_line(control::format_request(req));
	if (!line)
		return fail(line.error());
	auto reply = control::parse_reply(*line);
	if (!reply)
		return fail(reply.error());
	if (a.json)
		std::printf("%s\n", line->c_str());
	else
		print_list(stdout, reply->devices);
	return 0;
}

void sleep_for(double seconds)
{
	timespec ts;
	ts.tv_sec = time_t(seconds);
	ts.tv_nsec = long((seconds - std::floor(seconds)) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int run_stats(control::control_client &client, const args &a)
{
	control::control_request req{control::control_request::kind::stats, a.device};
	auto before = client.request(req);
	if (!before)
		return fail(before.error());
	for (long i = 0; a.count == 0 || i < a.count; ++i) {
		sleep_for(a.interval_s);
		auto after = client.request(req);
		if (!after)
			return fail(after.error());
		std::vector<stats_row> rows = build_rows(*before, *after);
		if (a.json) {
			std::printf("%s\n", rows_json(rows, interval_seconds(*before, *after)).c_str());
		} else {
			if (i > 0)
				std::printf("\n");
			print_table(stdout, rows);
		}
		std::fflush(stdout);
		before = std::move(after);
	}
	return 0;
}

// PATH.tmp then rename(): node_exporter never reads a half-written file.
setup_result<void> write_atomically(const std::string &path, const std::string &text)
{
	std::string tmp = path + ".tmp";
	FILE *f = std::fopen(tmp.c_str(), "w");
	if (!f)
		return setup_error{errno, tmp};
	// The first failure's errno: fclose and rename may set their own.
	int err = 0;
	errno = 0; // a short fwrite need not set it: not fopen's leftover
	if (std::fwrite(text.data(), 1, text.size(), f) != text.size())
		err = errno ? errno : EIO;
	if (std::fclose(f) != 0 && !err)
		err = errno;
	if (!err && std::rename(tmp.c_str(), path.c_str()) < 0)
		err = errno;
	if (err) {
		std::remove(tmp.c_str());
		return setup_error{err, path};
	}
	return {};
}

int run_metrics(control::control_client &client, const args &a)
{
	control::control_request req{control::control_request::kind::stats, {}};
	// To stdout: one snapshot. To a textfile: --count of them, 0 forever.
	long count = a.textfile.empty() ? 1 : a.count;
	for (long i = 0; count == 0 || i < count; ++i) {
		if (i > 0)
			sleep_for(a.interval_s);
		auto reply = client.request(req);
		if (!reply)
			return fail(reply.error());
		std::string text = prometheus_text(*reply);
		if (a.textfile.empty())
			std::fputs(text.c_str(), stdout);
		else if (auto written = write_atomically(a.textfile, text); !written)
			return fail(written.error());
	}
	return 0;
}

// One scrape: the request on stdin, the answer on stdout (a connection
// systemd accepted). The daemon is asked only for GET /metrics, and a
// daemon that cannot be asked is a 503 with the reason, not an exit.
int run_http(const args &a)
{
	metrics_source metrics = [&a]() -> setup_result<std::string> {
		control::control_client client;
		if (auto connected = client.connect(a.socket); !connected)
			return connected.error();
		auto reply = client.request({control::control_request::kind::stats, {}});
		if (!reply)
			return reply.error();
		return prometheus_text(*reply);
	};
	// Prometheus's scrape timeout defaults to 10 s.
	return serve_http(0, 1, 10000, metrics);
}

// Asks the daemon to re-read its configuration and says whether it did:
// exit 0 only when the new configuration is in force. systemd's ExecReload,
// so a refused file fails `systemctl reload tcmud` with the reason.
int run_reload(control::control_client &client)
{
	control::control_request req{control::control_request::kind::reload, {}};
	// Reading two small files: quick, but the control thread may be busy
	// taking a device over (up to the 30 s holder wait).
	auto line = client.request_line(control::format_request(req), 60000);
	if (!line)
		return fail(line.error());
	auto reply = control::parse_reply(*line);
	if (!reply) {
		// The daemon's own sentence (FILE:LINE: ...), not an errno's.
		std::fprintf(stderr, "tcmudctl: %s\n", reply.error().message.c_str());
		return 1;
	}
	std::printf("tcmud: configuration reloaded\n");
	return 0;
}

// No socket to ask (control_socket = none, or a daemon that predates
// reload over the socket): SIGHUP, whose result only the log has.
int reload_by_signal(long pid, const setup_error &why)
{
	if (kill(pid_t(pid), SIGHUP) < 0)
		return fail(setup_error{errno, "cannot send SIGHUP to " + std::to_string(pid)});
	std::fprintf(stderr, "tcmudctl: %s; sent SIGHUP to %ld instead: whether the "
		     "configuration was taken is in tcmud's log\n", why.what().c_str(), pid);
	return 0;
}

} // namespace
} // namespace tcmud::ctl

int main(int argc, char **argv)
{
	tcmud::ctl::args a;
	int rc = tcmud::ctl::parse_args(argc, argv, a);
	if (rc)
		return rc == 1 ? 0 : 2;
	// A closed pipe (tcmudctl stats | head) ends us quietly.
	signal(SIGPIPE, SIG_DFL);
	if (a.http) {
		// A scraper that hangs up early is write()'s EPIPE, not a signal.
		signal(SIGPIPE, SIG_IGN);
		return tcmud::ctl::run_http(a);
	}
	tcmud::control::control_client client;
	if (auto connected = client.connect(a.socket); !connected) {
		int err = connected.error().error;
		if (a.command == "reload" && a.pid && (err == ENOENT || err == ECONNREFUSED))
			return tcmud::ctl::reload_by_signal(a.pid, connected.error());
		return tcmud::ctl::fail(connected.error());
	}
	if (a.command == "reload")
		return tcmud::ctl::run_reload(client);
	if (a.command == "list")
		return tcmud::ctl::run_list(client, a);
	if (a.command == "metrics")
		return tcmud::ctl::run_metrics(client, a);
	return tcmud::ctl::run_stats(client, a);
}
