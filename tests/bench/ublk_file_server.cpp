// SPDX-License-Identifier: GPL-2.0-or-later
// A minimal, test-only ublk server: one queue that serves a regular file as
// /dev/ublkbN, for the benchmark's "why not a real block driver" row (issue
// 16). It exists to be counted next to LIO fileio and the TCMU daemons in
// the same boot, not to be used: no recovery, no zero copy, no discard.
//
//   ublk_file_server [-d DEPTH] [-m MAX_KB] FILE
//
// Prints "/dev/ublkbN" on stdout once the disk is live, serves until SIGTERM
// or SIGINT, then stops and deletes the device. Exit 77 when the kernel has
// no ublk (no /dev/ublk-control): the benchmark skips the row.
//
// The ublk UAPI (<linux/ublk_cmd.h>), as the 6.12 driver implements it:
// - control commands are IORING_OP_URING_CMD on /dev/ublk-control, in a ring
//   with 128-byte SQEs (the driver refuses others), struct ublksrv_ctrl_cmd
//   in the SQE's command area: ADD_DEV, SET_PARAMS, START_DEV, STOP_DEV,
//   DEL_DEV;
// - I/O: the queue's thread mmaps the kernel's per-queue array of struct
//   ublksrv_io_desc from /dev/ublkcN (read-only), then gives the driver one
//   FETCH_REQ per tag (struct ublksrv_io_cmd: the tag and the address of
//   that tag's buffer). A request completes that command with result 0 and
//   its descriptor filled in; the server does the I/O and answers with
//   COMMIT_AND_FETCH_REQ (the byte count or -errno), which also waits for
//   the tag's next request. The driver copies data between the request's
//   pages and the buffer (WRITE before the request is handed over, READ
//   after the commit). Commands that end with UBLK_IO_RES_ABORT mean the
//   device is stopping.
// - START_DEV waits until every tag has been fetched and then adds the disk,
//   whose partition scan reads from it: the queue thread must be running.
// - the ioctl-encoded opcodes (UBLK_U_*) are used, defined here when the
//   build host's header predates them: the driver may be built without the
//   legacy ones.
#include <liburing.h>
#include <linux/ublk_cmd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <span>
#include <string>
#include <thread>
#include <utility>

#ifndef UBLK_U_CMD_ADD_DEV
#define UBLK_U_CMD_ADD_DEV _IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV _IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_DEV _IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_STOP_DEV _IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_SET_PARAMS _IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd)
#endif
#ifndef UBLK_U_IO_FETCH_REQ
#define UBLK_U_IO_FETCH_REQ _IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ _IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd)
#endif

namespace {

constexpr uint32_t no_dev = ~0u;

class unique_fd {
public:
	explicit unique_fd(int fd = -1) : fd_(fd) {}
	unique_fd(unique_fd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
	unique_fd &operator=(unique_fd &&o) noexcept
	{
		reset(std::exchange(o.fd_, -1));
		return *this;
	}
	~unique_fd() { reset(); }
	void reset(int fd = -1)
	{
		if (fd_ >= 0)
			::close(fd_);
		fd_ = fd;
	}
	int get() const { return fd_; }
	explicit operator bool() const { return fd_ >= 0; }

private:
	int fd_;
};

class mapping {
public:
	mapping() = default;
	mapping(void *p, size_t len) : p_(p), len_(len) {}
	mapping(mapping &&o) noexcept : p_(std::exchange(o.p_, MAP_FAILED)), len_(o.len_) {}
	~mapping()
	{
		if (p_ != MAP_FAILED)
			::munmap(p_, len_);
	}
	mapping &operator=(mapping &&) = delete;
	bool ok() const { return p_ != MAP_FAILED; }
	std::byte *data() const { return static_cast<std::byte *>(p_); }

private:
	void *p_ = MAP_FAILED;
	size_t len_ = 0;
};

class ring {
public:
	int init(unsigned entries, unsigned flags)
	{
		int rc = io_uring_queue_init(entries, &r_, flags);
		live_ = rc == 0;
		return rc;
	}
	~ring()
	{
		if (live_)
			io_uring_queue_exit(&r_);
	}
	io_uring *get() { return &r_; }

private:
	io_uring r_{};
	bool live_ = false;
};

// The command area of an SQE (16 bytes in a 64-byte SQE, 80 in a 128-byte
// one). liburing declares it as a zero-length array, which the compiler's
// bounds checks would take literally.
static_assert(offsetof(io_uring_sqe, cmd) == 48);
void set_cmd(io_uring_sqe *sqe, const void *cmd, size_t len)
{
	std::memcpy(reinterpret_cast<std::byte *>(sqe) + offsetof(io_uring_sqe, cmd), cmd, len);
}

io_uring_sqe *prep_uring_cmd(io_uring *r, int fd, uint32_t op, const void *cmd, size_t len,
			     size_t sqe_size)
{
	io_uring_sqe *sqe = io_uring_get_sqe(r);
	if (!sqe)
		return nullptr;
	std::memset(static_cast<void *>(sqe), 0, sqe_size);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	set_cmd(sqe, cmd, len);
	return sqe;
}

// One control command, waited for: its result (>= 0) or -errno.
int ctrl(io_uring *r, int ctl_fd, uint32_t op, ublksrv_ctrl_cmd c)
{
	if (!prep_uring_cmd(r, ctl_fd, op, &c, sizeof(c), 128))
		return -EBUSY;
	int rc = io_uring_submit(r);
	if (rc < 0)
		return rc;
	io_uring_cqe *cqe;
	while ((rc = io_uring_wait_cqe(r, &cqe)) == -EINTR) {
	}
	if (rc < 0)
		return rc;
	rc = cqe->res;
	io_uring_cqe_seen(r, cqe);
	return rc;
}

struct queue_config {
	int dev_id;
	int char_fd;
	int backing_fd;
	unsigned depth;
	size_t max_io;
};

// The backing file's part of one request: bytes done or -errno.
int serve_one(const ublksrv_io_desc &iod, std::span<std::byte> buf, int fd)
{
	const size_t len = size_t(iod.nr_sectors) << 9;
	const off_t off = off_t(iod.start_sector << 9);
	if (len > buf.size())
		return -EINVAL;
	switch (ublksrv_get_op(&iod)) {
	case UBLK_IO_OP_READ:
	case UBLK_IO_OP_WRITE: {
		const bool rd = ublksrv_get_op(&iod) == UBLK_IO_OP_READ;
		size_t done = 0;
		while (done < len) {
			ssize_t n = rd ? ::pread(fd, buf.data() + done, len - done, off + off_t(done))
				       : ::pwrite(fd, buf.data() + done, len - done, off + off_t(done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0) {
				// Past the end of the file: zeros, as a sparse tail would read.
				if (!rd)
					return -ENOSPC;
				std::memset(buf.data() + done, 0, len - done);
				break;
			}
			done += size_t(n);
		}
		return int(len);
	}
	case UBLK_IO_OP_FLUSH:
		return ::fdatasync(fd) ? -errno : 0;
	default:
		return -EOPNOTSUPP;
	}
}

// The queue's thread: fetch every tag (the driver binds the queue to the
// task that fetches), tell `fetched` whether that worked, then serve until
// every command has come back aborted (STOP_DEV). Returns 0 or -errno.
int serve_queue(const queue_config &q, std::promise<int> &fetched, bool &told)
{
	const size_t desc_len = (q.depth * sizeof(ublksrv_io_desc) + 4095) & ~size_t(4095);
	mapping descs(::mmap(nullptr, desc_len, PROT_READ, MAP_SHARED | MAP_POPULATE, q.char_fd,
			     UBLKSRV_CMD_BUF_OFFSET),
		      desc_len);
	if (!descs.ok())
		return -errno;
	const size_t buf_len = q.max_io * q.depth;
	mapping bufs(::mmap(nullptr, buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
		     buf_len);
	if (!bufs.ok())
		return -errno;
	ring r;
	int rc = r.init(q.depth * 2, 0);
	if (rc < 0)
		return rc;
	auto submit_io = [&](uint32_t op, uint16_t tag, int32_t result) {
		ublksrv_io_cmd c{};
		c.q_id = 0;
		c.tag = tag;
		c.result = result;
		c.addr = reinterpret_cast<uint64_t>(bufs.data() + size_t(tag) * q.max_io);
		io_uring_sqe *sqe = prep_uring_cmd(r.get(), q.char_fd, op, &c, sizeof(c), 64);
		if (sqe)
			io_uring_sqe_set_data64(sqe, tag);
		return sqe != nullptr;
	};
	for (unsigned tag = 0; tag < q.depth; tag++)
		if (!submit_io(UBLK_U_IO_FETCH_REQ, uint16_t(tag), 0))
			return -EBUSY;
	rc = io_uring_submit(r.get());
	if (rc < 0)
		return rc;
	told = true;
	fetched.set_value(0);
	unsigned outstanding = q.depth;
	const auto *iods = reinterpret_cast<const ublksrv_io_desc *>(descs.data());
	while (outstanding) {
		rc = io_uring_submit_and_wait(r.get(), 1);
		if (rc == -EINTR)
			continue;
		if (rc < 0)
			return rc;
		io_uring_cqe *cqe;
		unsigned head, seen = 0;
		io_uring_for_each_cqe(r.get(), head, cqe)
		{
			seen++;
			const auto tag = uint16_t(io_uring_cqe_get_data64(cqe));
			if (cqe->res != UBLK_IO_RES_OK) {
				// UBLK_IO_RES_ABORT: stopping; anything else: the driver
				// refused the command, and the tag is lost either way.
				if (cqe->res != UBLK_IO_RES_ABORT)
					std::fprintf(stderr, "ublk_file_server: tag %u: %s\n", tag,
						     std::strerror(-cqe->res));
				outstanding--;
				continue;
			}
			std::span<std::byte> buf(bufs.data() + size_t(tag) * q.max_io, q.max_io);
			const int res = serve_one(iods[tag], buf, q.backing_fd);
			if (!submit_io(UBLK_U_IO_COMMIT_AND_FETCH_REQ, tag, res)) {
				// Never: the ring has twice as many entries as tags.
				outstanding--;
			}
		}
		io_uring_cq_advance(r.get(), seen);
	}
	return 0;
}

int run_queue(const queue_config &q, std::promise<int> &fetched)
{
	bool told = false;
	int rc = serve_queue(q, fetched, told);
	if (!told)
		fetched.set_value(rc < 0 ? rc : -EIO);
	return rc;
}

int usage()
{
	std::fprintf(stderr, "usage: ublk_file_server [-d DEPTH] [-m MAX_KB] FILE\n");
	return 2;
}

} // namespace

int main(int argc, char **argv)
{
	unsigned depth = 64;
	size_t max_kb = 512;
	int opt;
	while ((opt = ::getopt(argc, argv, "d:m:")) != -1) {
		if (opt == 'd')
			depth = unsigned(std::strtoul(optarg, nullptr, 0));
		else if (opt == 'm')
			max_kb = std::strtoul(optarg, nullptr, 0);
		else
			return usage();
	}
	if (optind + 1 != argc || depth == 0 || depth > UBLK_MAX_QUEUE_DEPTH || max_kb < 4 ||
	    max_kb % 4 || max_kb > 32768)
		return usage();
	unique_fd backing(::open(argv[optind], O_RDWR | O_CLOEXEC));
	if (!backing) {
		std::fprintf(stderr, "ublk_file_server: %s: %s\n", argv[optind], std::strerror(errno));
		return 1;
	}
	const off_t size = ::lseek(backing.get(), 0, SEEK_END);
	if (size < 512) {
		std::fprintf(stderr, "ublk_file_server: %s: too small\n", argv[optind]);
		return 1;
	}
	unique_fd ctl(::open("/dev/ublk-control", O_RDWR | O_CLOEXEC));
	if (!ctl) {
		std::fprintf(stderr, "ublk_file_server: /dev/ublk-control: %s (modprobe ublk_drv)\n",
			     std::strerror(errno));
		return errno == ENOENT ? 77 : 1;
	}
	ring cr;
	int rc = cr.init(4, IORING_SETUP_SQE128);
	if (rc < 0) {
		std::fprintf(stderr, "ublk_file_server: io_uring (SQE128): %s\n", std::strerror(-rc));
		return 1;
	}

	ublksrv_ctrl_dev_info info{};
	info.nr_hw_queues = 1;
	info.queue_depth = uint16_t(depth);
	info.max_io_buf_bytes = uint32_t(max_kb << 10);
	info.dev_id = no_dev;
	info.ublksrv_pid = ::getpid();
	info.flags = 0; // copy mode: the driver copies to and from our buffers
	ublksrv_ctrl_cmd c{};
	c.dev_id = no_dev;
	c.queue_id = uint16_t(-1);
	c.addr = reinterpret_cast<uint64_t>(&info);
	c.len = sizeof(info);
	rc = ctrl(cr.get(), ctl.get(), UBLK_U_CMD_ADD_DEV, c);
	if (rc < 0) {
		std::fprintf(stderr, "ublk_file_server: ADD_DEV: %s\n", std::strerror(-rc));
		return 1;
	}
	const uint32_t id = info.dev_id;
	c.dev_id = id;
	c.addr = 0;
	c.len = 0;
	auto del_dev = [&] {
		int r = ctrl(cr.get(), ctl.get(), UBLK_U_CMD_DEL_DEV, c);
		if (r < 0)
			std::fprintf(stderr, "ublk_file_server: DEL_DEV: %s\n", std::strerror(-r));
	};

	ublk_params p{};
	p.len = sizeof(p);
	p.types = UBLK_PARAM_TYPE_BASIC;
	p.basic.attrs = UBLK_ATTR_VOLATILE_CACHE;
	p.basic.logical_bs_shift = 9;
	p.basic.physical_bs_shift = 12;
	p.basic.io_min_shift = 9;
	p.basic.io_opt_shift = 12;
	p.basic.max_sectors = uint32_t(max_kb << 1);
	p.basic.dev_sectors = uint64_t(size) >> 9;
	ublksrv_ctrl_cmd pc = c;
	pc.addr = reinterpret_cast<uint64_t>(&p);
	pc.len = sizeof(p);
	rc = ctrl(cr.get(), ctl.get(), UBLK_U_CMD_SET_PARAMS, pc);
	if (rc < 0) {
		std::fprintf(stderr, "ublk_file_server: SET_PARAMS: %s\n", std::strerror(-rc));
		del_dev();
		return 1;
	}
	const std::string cdev = "/dev/ublkc" + std::to_string(id);
	unique_fd ch(::open(cdev.c_str(), O_RDWR | O_CLOEXEC));
	if (!ch) {
		std::fprintf(stderr, "ublk_file_server: %s: %s\n", cdev.c_str(), std::strerror(errno));
		del_dev();
		return 1;
	}

	// SIGTERM/SIGINT are taken by sigwait() in this thread only.
	sigset_t stop_sigs;
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, nullptr);
	const queue_config qc{int(id), ch.get(), backing.get(), depth, max_kb << 10};
	std::atomic<int> queue_rc{0};
	std::promise<int> fetched;
	auto fetch_rc = fetched.get_future();
	std::thread queue([&] { queue_rc = run_queue(qc, fetched); });

	// START_DEV would wait for tags that a failed queue thread never fetched.
	rc = fetch_rc.get();
	if (rc < 0) {
		queue.join();
		std::fprintf(stderr, "ublk_file_server: queue set-up: %s\n", std::strerror(-rc));
		ch.reset();
		del_dev();
		return 1;
	}
	ublksrv_ctrl_cmd sc = c;
	sc.data[0] = uint64_t(::getpid());
	rc = ctrl(cr.get(), ctl.get(), UBLK_U_CMD_START_DEV, sc);
	if (rc < 0)
		std::fprintf(stderr, "ublk_file_server: START_DEV: %s\n", std::strerror(-rc));
	else {
		std::printf("/dev/ublkb%u\n", id);
		std::fflush(stdout);
		int sig;
		sigwait(&stop_sigs, &sig);
	}
	// STOP_DEV removes the disk and aborts the fetched commands, which ends
	// the queue thread, also when START_DEV failed half-way.
	int stop_rc = ctrl(cr.get(), ctl.get(), UBLK_U_CMD_STOP_DEV, c);
	if (stop_rc < 0)
		std::fprintf(stderr, "ublk_file_server: STOP_DEV: %s\n", std::strerror(-stop_rc));
	queue.join();
	if (queue_rc < 0)
		std::fprintf(stderr, "ublk_file_server: queue: %s\n", std::strerror(-queue_rc));
	ch.reset();
	del_dev();
	return rc < 0 || stop_rc < 0 || queue_rc < 0 ? 1 : 0;
}
