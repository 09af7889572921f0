// SPDX-License-Identifier: GPL-2.0-or-later
#include "log/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tcmud {
namespace {

// Longer lines are cut; a log line is never worth an allocation.
constexpr size_t max_line = 1024;

std::atomic<log_level> current_level{log_level::info};

std::mutex sink_mutex;
log_sink current_sink = nullptr; // guarded by sink_mutex
void *current_ctx = nullptr;     // guarded by sink_mutex

// Whether stderr is the stream systemd connected to the journal. Asked per
// line (one fstat: lines are never per I/O), so it stays right when stderr
// is redirected, and a child that inherited JOURNAL_STREAM with another
// stderr does not send prefixes to a terminal.
bool stderr_is_journal()
{
	const char *stream = getenv("JOURNAL_STREAM");
	if (!stream)
		return false;
	unsigned long long dev = 0, ino = 0;
	if (sscanf(stream, "%llu:%llu", &dev, &ino) != 2)
		return false;
	struct stat st{};
	return fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

void stderr_sink(void *, log_level level, std::string_view line)
{
	write_stderr_line(level, line);
}

void emit(log_level level, std::string_view prefix, const char *fmt,
	  va_list args)
{
	char line[max_line];
	size_t used = 0;
	if (!prefix.empty()) {
		used = std::min(prefix.size(), max_line / 2);
		memcpy(line, prefix.data(), used);
		line[used++] = ' ';
	}
	int n = vsnprintf(line + used, max_line - used, fmt, args);
	if (n < 0)
		return;
	used = std::min(used + static_cast<size_t>(n), max_line - 1);

	std::lock_guard lock(sink_mutex);
	log_sink sink = current_sink ? current_sink : stderr_sink;
	sink(current_ctx, level, std::string_view(line, used));
}

} // namespace

void set_log_level(log_level level)
{
	current_level.store(level, std::memory_order_relaxed);
}

log_level get_log_level()
{
	return current_level.load(std::memory_order_relaxed);
}

bool log_enabled(log_level level)
{
	return static_cast<uint8_t>(level) <=
	       static_cast<uint8_t>(current_level.load(std::memory_order_relaxed));
}

void set_log_sink(log_sink sink, void *ctx)
{
	std::lock_guard lock(sink_mutex);
	current_sink = sink;
	current_ctx = sink ? ctx : nullptr;
}

size_t format_line(std::span<char> out, log_level level, std::string_view line)
{
	if (out.empty())
		return 0;
	std::string_view name = log_level_name(level);
	int n = snprintf(out.data(), out.size(), "tcmud %.*s: %.*s\n",
			 static_cast<int>(name.size()), name.data(),
			 static_cast<int>(line.size()), line.data());
	if (n <= 0)
		return 0;
	if (static_cast<size_t>(n) >= out.size()) {
		// Cut: keep the newline, so the next line starts on its own.
		out[out.size() - 2] = '\n';
		return out.size() - 1;
	}
	return static_cast<size_t>(n);
}

// One write(2) per line, so lines from several threads (or processes sharing
// the terminal) never interleave mid-line.
void write_stderr_line(log_level level, std::string_view line)
{
	char buf[max_formatted_line + 3];
	size_t prefix = 0;
	if (stderr_is_journal()) {
		buf[0] = '<';
		buf[1] = static_cast<char>('0' + static_cast<uint8_t>(level));
		buf[2] = '>';
		prefix = 3;
	}
	size_t len = format_line(std::span<char>(buf + prefix, max_formatted_line), level, line);
	ssize_t ignored = ::write(STDERR_FILENO, buf, prefix + len);
	(void)ignored;
}

std::string_view log_level_name(log_level level)
{
	switch (level) {
	case log_level::error: return "error";
	case log_level::warn: return "warn";
	case log_level::info: return "info";
	case log_level::debug: return "debug";
	}
	return "?";
}

std::optional<log_level> parse_log_level(std::string_view text)
{
	for (log_level l : {log_level::error, log_level::warn, log_level::info,
			    log_level::debug})
		if (text == log_level_name(l))
			return l;
	return std::nullopt;
}

#define TCMUD_DEFINE_LOG_FUNCTION(name, level)                              \
	void name(std::string_view prefix, const char *fmt, ...)            \
	{                                                                   \
		if (!log_enabled(level))                                    \
			return;                                             \
		va_list args;                                               \
		va_start(args, fmt);                                        \
		emit(level, prefix, fmt, args);                             \
		va_end(args);                                               \
	}

TCMUD_DEFINE_LOG_FUNCTION(log_error, log_level::error)
TCMUD_DEFINE_LOG_FUNCTION(log_warn, log_level::warn)
TCMUD_DEFINE_LOG_FUNCTION(log_info, log_level::info)
TCMUD_DEFINE_LOG_FUNCTION(log_debug, log_level::debug)

} // namespace tcmud
