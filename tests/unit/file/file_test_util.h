// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Helpers for the file handler tests: temporary backing files, a real
// engine, an engine wrapper that can refuse SQEs and shows the last one
// handed out, and a way to run one block_io to completion.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "file/file_backstore.h"
#include "file/file_queue.h"
#include "io/uring_engine.h"
#include "log/log.h"

namespace tcmud::test {

// A temporary file of a given size on /tmp (ext4 here: it has O_DIRECT,
// PUNCH_HOLE and ZERO_RANGE), removed at the end of the test.
class temp_file {
public:
	explicit temp_file(uint64_t size)
	{
		char name[] = "/tmp/tcmud-file-test-XXXXXX";
		int fd = mkstemp(name);
		REQUIRE(fd >= 0);
		path_ = name;
		REQUIRE(ftruncate(fd, static_cast<off_t>(size)) == 0);
		close(fd);
	}
	~temp_file() { unlink(path_.c_str()); }
	temp_file(const temp_file &) = delete;
	temp_file &operator=(const temp_file &) = delete;

	const std::string &path() const { return path_; }
	uint64_t size() const
	{
		struct stat st;
		return stat(path_.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
	}
	uint64_t allocated_bytes() const
	{
		struct stat st;
		return stat(path_.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
	}
	std::vector<char> read_all() const
	{
		std::vector<char> data(size());
		int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
		REQUIRE(fd >= 0);
		REQUIRE(pread(fd, data.data(), data.size(), 0) ==
			static_cast<ssize_t>(data.size()));
		close(fd);
		return data;
	}

private:
	std::string path_;
};

// A temporary directory on /tmp, removed with everything in it at the end
// of the test (remove_all removes links, never what they point at).
class temp_dir {
public:
	temp_dir()
	{
		char name[] = "/tmp/tcmud-file-dir-XXXXXX";
		REQUIRE(mkdtemp(name) != nullptr);
		path_ = name;
	}
	~temp_dir()
	{
		std::error_code ignored;
		std::filesystem::remove_all(path_, ignored);
	}
	temp_dir(const temp_dir &) = delete;
	temp_dir &operator=(const temp_dir &) = delete;

	const std::string &path() const { return path_; }
	// path()/name
	std::string operator/(const std::string &name) const { return path_ + "/" + name; }

private:
	std::string path_;
};

// Catch2 2.x has no SKIP: the reason is shown as a warning and the test case
// ends there, passing.
#define TCMUD_SKIP(why)                         \
	do {                                    \
		WARN("skipped: " << why);       \
		return;                         \
	} while (0)

// A loop device (a real block device) over a temporary file, detached at
// the end of the test (and by the kernel, LO_FLAGS_AUTOCLEAR, should the
// test die first). Attaching needs root and a loop driver.
class loop_device {
public:
	// The device, or nullptr and why none could be had.
	static std::unique_ptr<loop_device> attach(uint64_t size, std::string *why)
	{
		if (geteuid() != 0) {
			*why = "attaching a loop device needs root";
			return nullptr;
		}
		auto dev = std::unique_ptr<loop_device>(new loop_device(size));
		int ctl = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
		int backing = ::open(dev->file_.path().c_str(), O_RDWR | O_CLOEXEC);
		// Another process may take the free device first: try again.
		for (int attempt = 0; ctl >= 0 && backing >= 0 && attempt < 8; ++attempt) {
			int n = ioctl(ctl, LOOP_CTL_GET_FREE);
			if (n < 0)
				break;
			std::string path = "/dev/loop" + std::to_string(n);
			int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
			if (fd < 0)
				break;
			loop_config cfg{};
			cfg.fd = static_cast<uint32_t>(backing);
			cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
			if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0) {
				dev->fd_ = fd;
				dev->path_ = path;
				break;
			}
			int err = errno;
			close(fd);
			if (err != EBUSY)
				break;
		}
		if (backing >= 0)
			close(backing);
		if (ctl >= 0)
			close(ctl);
		if (dev->fd_ < 0) {
			*why = "no loop device could be attached";
			return nullptr;
		}
		return dev;
	}
	~loop_device()
	{
		if (fd_ < 0)
			return;
		ioctl(fd_, LOOP_CLR_FD);
		close(fd_);
	}
	loop_device(const loop_device &) = delete;
	loop_device &operator=(const loop_device &) = delete;

	const std::string &path() const { return path_; } // /dev/loopN

private:
	explicit loop_device(uint64_t size) : file_(size) {}

	temp_file file_;
	int fd_ = -1;
	std::string path_;
};

// Creates (or replaces) `path` with `size` bytes of `fill`.
inline void write_file(const std::string &path, size_t size, char fill)
{
	int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0);
	std::vector<char> data(size, fill);
	REQUIRE(write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
	close(fd);
}

inline backstore_config make_config(const std::string &cfgstring, uint64_t dev_size)
{
	backstore_config cfg;
	cfg.subtype = "file";
	cfg.cfgstring = cfgstring;
	cfg.dev_size = dev_size;
	cfg.block_size = 512;
	cfg.log_prefix = "file/test:";
	return cfg;
}

inline std::unique_ptr<backstore> open_store(const std::string &cfgstring,
					     uint64_t dev_size)
{
	auto store = file_backstore::open(make_config(cfgstring, dev_size));
	INFO("open failed: " << (store ? "" : store.error().what()));
	REQUIRE(store);
	return std::move(*store);
}

inline std::unique_ptr<uring_engine> make_engine()
{
	auto engine = uring_engine::create({});
	INFO("io_uring set-up failed: " << (engine ? "" : engine.error().what()));
	REQUIRE(engine);
	return std::move(*engine);
}

// Forwards to a real engine, but can pretend the SQ is full, keeps the
// last SQE it handed out so a test can look at what the queue prepared, and
// records a copy of every SQE in order (taken when the next one is asked
// for, or by sequence(): the queue fills an SQE after get_sqe returns).
struct gated_engine final : io_engine {
	uring_engine &real;
	bool full = false;
	int refused = 0;
	io_uring_sqe *last = nullptr;
	std::vector<io_uring_sqe> recorded;

	explicit gated_engine(uring_engine &engine) : real(engine) {}
	io_uring_sqe *get_sqe(io_completion *done) override { return hand_out(done, false); }
	// The real engine's uncleared SQE, filled with garbage but for its
	// user_data: whatever the queue does not set itself then reaches the
	// kernel as 0xa5 bytes (an unknown personality, ioprio, flags) and
	// fails the I/O, or shows in the recorded SQEs.
	io_uring_sqe *get_sqe_uncleared_slow(io_completion *done) override
	{
		return hand_out(done, true);
	}
	io_uring_sqe *hand_out(io_completion *done, bool uncleared)
	{
		if (full) {
			refused++;
			return nullptr;
		}
		snapshot();
		last = uncleared ? real.get_sqe_uncleared(done) : real.get_sqe(done);
		if (last && uncleared) {
			const uint64_t data = last->user_data;
			std::memset(static_cast<void *>(last), 0xa5, sizeof(*last));
			last->user_data = data;
		}
		pending = last != nullptr;
		return last;
	}
	const std::vector<io_uring_sqe> &sequence()
	{
		snapshot();
		return recorded;
	}
	void snapshot()
	{
		if (pending)
			recorded.push_back(*last);
		pending = false;
	}
	bool pending = false;
	void wait_for_sqe(io_completion *waiter) override { real.wait_for_sqe(waiter); }
	setup_result<int> register_file(int fd) override { return real.register_file(fd); }
	void unregister_file(int index) override { real.unregister_file(index); }
	// Set before the queue opens: the area the queue is told is
	// registered, in place of the real engine's (which need not have it).
	std::optional<fixed_buffer_area> pretend_area;
	fixed_buffer_area fixed_buffers() const override
	{
		return pretend_area ? *pretend_area : real.fixed_buffers();
	}
};

struct recording_completion final : io_completion {
	std::vector<int64_t> results;
	void io_done(int64_t result) override { results.push_back(result); }
};

// Submits io and runs the engine until its completion arrives; returns the
// result. Fails the test if the completion never comes or comes twice.
inline int64_t run_io(uring_engine &engine, backstore_queue &queue, block_io &io)
{
	recording_completion done;
	io.done = &done;
	queue.submit(io);
	const __kernel_timespec wait{.tv_sec = 5, .tv_nsec = 0};
	for (int round = 0; round < 100 && done.results.empty(); round++)
		REQUIRE(engine.run_once(1, &wait) >= 0);
	engine.run_once(0); // a second completion would show up here
	REQUIRE(done.results.size() == 1);
	return done.results[0];
}

inline block_io make_rw(block_op op, uint64_t offset, std::span<const iovec> iov)
{
	block_io io;
	io.op = op;
	io.offset = offset;
	io.iov = iov;
	for (const iovec &v : iov)
		io.length += v.iov_len;
	return io;
}

inline block_io make_range(block_op op, uint64_t offset, uint64_t length)
{
	block_io io;
	io.op = op;
	io.offset = offset;
	io.length = length;
	return io;
}

// Captures log lines for the duration of a test.
struct log_capture {
	std::vector<std::string> lines;
	static void sink(void *ctx, log_level, std::string_view line)
	{
		static_cast<log_capture *>(ctx)->lines.emplace_back(line);
	}
	log_capture() { set_log_sink(sink, this); }
	~log_capture() { set_log_sink(nullptr, nullptr); }
	bool contains(std::string_view text) const
	{
		for (const auto &line : lines)
			if (line.find(text) != std::string::npos)
				return true;
		return false;
	}
};

} // namespace tcmud::test
