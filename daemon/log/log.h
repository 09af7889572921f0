// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The daemon's logger. One line per call, prefixed with the device
// ("file/lun0: ") as tcmu-runner does, so a line names the device it is
// about. Lines go to stderr until the control plane installs a sink (journald,
// a file). The level is checked before anything is formatted, so a disabled
// debug line costs one relaxed atomic load. Never log per I/O.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tcmud {

// Values are syslog priorities, so a journald or syslog sink can pass them on.
enum class log_level : uint8_t {
	error = 3,
	warn = 4,
	info = 6,
	debug = 7,
};

// A sink receives one complete line (no trailing newline). Calls are
// serialised, so a sink needs no locking of its own.
using log_sink = void (*)(void *ctx, log_level level, std::string_view line);

void set_log_level(log_level level);
log_level get_log_level();
bool log_enabled(log_level level);

// nullptr restores the stderr sink.
void set_log_sink(log_sink sink, void *ctx);

// The text form of a line, "tcmud LEVEL: line\n", cut to fit `out`; returns
// its length. Every sink that writes text uses it, so the journal, stderr and
// the log file carry the same words that scripts and administrators grep for.
size_t format_line(std::span<char> out, log_level level, std::string_view line);

// Room format_line() needs for any line the logger emits.
constexpr size_t max_formatted_line = 1024 + 32;

// Writes one line to stderr in format_line()'s words, in one write(2). When
// stderr is the journal's stream (systemd's JOURNAL_STREAM names its device
// and inode), the line starts with the sd-daemon priority prefix "<N>", which
// journald strips and keeps as the entry's PRIORITY: `journalctl -p err`
// then shows tcmud's errors, and only those.
void write_stderr_line(log_level level, std::string_view line);

// Parses "error", "warn", "info" or "debug"; nullopt if it is none of them.
std::optional<log_level> parse_log_level(std::string_view text);
std::string_view log_level_name(log_level level);

// prefix: "subtype/devname:" or empty for daemon-wide lines.
void log_error(std::string_view prefix, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_warn(std::string_view prefix, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_info(std::string_view prefix, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_debug(std::string_view prefix, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

} // namespace tcmud
