// SPDX-License-Identifier: GPL-2.0-or-later
// uio-generic-check: drives a uio driver that does NOT opt in to the
// patched uio core's lock-free path — Debian's stock uio_pci_generic bound
// to QEMU's "edu" PCI device — through the uio character device ABI, and
// prints one line per observed behaviour. The VM scenario kmod-uio-generic
// runs it on the stock uio.ko and on the patched one in the same boot and
// requires the two outputs to be identical.
//
//   uio-generic-check PCI_ADDRESS       (e.g. 0000:00:04.0, bound to uio_pci_generic)
//
// Checks (each also against the value uio.c documents, so that a run that
// behaves the same wrongly on both modules still fails):
//   - map0 (BAR0) mmap through the uio fd; edu's identification register
//   - read/write of a size other than 4 bytes: EINVAL
//   - O_NONBLOCK read with no new event: EAGAIN; poll: no event
//   - irqcontrol write: uio_pci_generic has no irqcontrol, ENOSYS
//   - a blocking read() stays blocked until an interrupt raised through
//     edu's register, then returns the event count, one more than before
//     (also in sysfs "event"); poll() is woken the same way
//   - a reader blocked in read() while the device is unbound gets EIO;
//     afterwards read: EIO, write: EINVAL, poll: -EIO as a mask, mmap: EINVAL
// Exit status 0 only if every check saw its documented value.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace {

// edu's BAR0 registers (QEMU docs/specs/edu.rst).
constexpr size_t edu_id = 0x00;           // 0xRRrr00ed: major, minor, 0x00ed
constexpr size_t edu_irq_status = 0x24;
constexpr size_t edu_irq_raise = 0x60;    // value ORed into irq_status, INTx asserted
constexpr size_t edu_irq_ack = 0x64;      // value cleared; INTx deasserted at 0
constexpr uint16_t pci_command_intx_disable = 0x400;

class unique_fd {
public:
	explicit unique_fd(int fd = -1) : fd_(fd) {}
	unique_fd(const unique_fd &) = delete;
	unique_fd &operator=(const unique_fd &) = delete;
	~unique_fd() { if (fd_ >= 0) close(fd_); }
	int get() const { return fd_; }
private:
	int fd_;
};

class bar_mapping {
public:
	bar_mapping(int fd, size_t size)
		: size_(size), p_(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)),
		  err_(errno) {}
	bar_mapping(const bar_mapping &) = delete;
	bar_mapping &operator=(const bar_mapping &) = delete;
	~bar_mapping() { if (ok()) munmap(p_, size_); }
	bool ok() const { return p_ != MAP_FAILED; }
	// mmap's errno when !ok().
	int error() const { return err_; }
	volatile uint32_t &reg(size_t off) const
	{
		return *reinterpret_cast<volatile uint32_t *>(static_cast<uint8_t *>(p_) + off);
	}
private:
	size_t size_;
	void *p_;
	int err_;
};

int failures = 0;

// Prints "NAME: GOT" (the line both runs must share) and counts a mismatch.
void report(const char *name, const std::string &got, const std::string &want)
{
	std::printf("%s: %s\n", name, got.c_str());
	if (got != want) {
		std::fprintf(stderr, "FAIL %s: got '%s', documented '%s'\n", name, got.c_str(), want.c_str());
		failures++;
	}
}

// A syscall's result and its errno. Made by `c = now(call(...));` as its
// own statement: errno is read on entry, before anything else runs. (In
// outcome(poll(...), errno) the order of the arguments is unspecified:
// errno may be read before poll runs.)
struct call_result {
	ssize_t rc;
	int err;
};

call_result now(ssize_t rc)
{
	return {rc, errno};
}

// A syscall's outcome as text: "ok N" or the errno's name.
std::string outcome(ssize_t rc, int err)
{
	if (rc >= 0)
		return "ok " + std::to_string(rc);
	const char *name = strerrorname_np(err);
	return name ? name : "errno " + std::to_string(err);
}

std::string outcome(call_result r)
{
	return outcome(r.rc, r.err);
}

std::string sysfs_line(const std::string &path)
{
	std::ifstream f(path);
	std::string s;
	std::getline(f, s);
	return s;
}

// uio_pci_generic's handler masks INTx (DisINTx in the command register);
// user space unmasks it through config space once the device is quiet.
bool unmask_intx(const std::string &pci)
{
	unique_fd cfg(open(("/sys/bus/pci/devices/" + pci + "/config").c_str(), O_RDWR | O_CLOEXEC));
	uint16_t cmd = 0;
	if (cfg.get() < 0 || pread(cfg.get(), &cmd, 2, 4) != 2)
		return false;
	cmd &= ~pci_command_intx_disable;
	return pwrite(cfg.get(), &cmd, 2, 4) == 2;
}

// The edu interrupt, raised and then quietened as the handler's user-space
// half would: acknowledge in the device, then unmask INTx.
void raise_irq(const bar_mapping &bar)
{
	bar.reg(edu_irq_raise) = 1;
}

bool quiet_irq(const bar_mapping &bar, const std::string &pci)
{
	bar.reg(edu_irq_ack) = bar.reg(edu_irq_status);
	return unmask_intx(pci);
}

struct blocked_read {
	std::atomic<bool> done{false};
	ssize_t rc = 0;
	int err = 0;
	int32_t count = 0;
	std::thread t;

	explicit blocked_read(int fd)
		: t([this, fd] {
			rc = read(fd, &count, sizeof(count));
			err = errno;
			done = true;
		}) {}
	// A reader that never woke (the failure being tested for) is left to
	// process exit rather than hanging the check.
	~blocked_read()
	{
		if (t.joinable())
			done ? t.join() : t.detach();
	}
	// Gives the reader time to block (TCG is slow): it must not return by itself.
	bool still_blocked_after(std::chrono::milliseconds ms) const
	{
		std::this_thread::sleep_for(ms);
		return !done;
	}
	bool finishes_within(std::chrono::seconds s)
	{
		auto end = std::chrono::steady_clock::now() + s;
		while (!done && std::chrono::steady_clock::now() < end)
			std::this_thread::sleep_for(std::chrono::milliseconds(10));
		if (done)
			t.join();
		return done;
	}
};

void check_sizes_and_nonblocking(const std::string &uio)
{
	unique_fd fd(open(uio.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
	int32_t v = 0;
	int64_t wide = 0;
	auto c = now(read(fd.get(), &v, 2));
	report("read 2 bytes", outcome(c), "EINVAL");
	c = now(write(fd.get(), &wide, sizeof(wide)));
	report("write 8 bytes", outcome(c), "EINVAL");
	c = now(read(fd.get(), &v, 4));
	report("nonblocking read, no event", outcome(c), "EAGAIN");
	pollfd p{fd.get(), POLLIN, 0};
	// p.revents is read once poll has returned, not in the same expression.
	c = now(poll(&p, 1, 0));
	report("poll, no event", outcome(c) + " revents " + std::to_string(p.revents), "ok 0 revents 0");
	v = 1;
	c = now(write(fd.get(), &v, 4));
	report("irqcontrol write", outcome(c), "ENOSYS");
}

void check_interrupts(int fd, const bar_mapping &bar, const std::string &pci, const std::string &sys)
{
	int before = std::stoi(sysfs_line(sys + "/event"));
	blocked_read r(fd);
	report("read blocks without an interrupt", r.still_blocked_after(std::chrono::milliseconds(500)) ? "yes" : "no", "yes");
	raise_irq(bar);
	bool woke = r.finishes_within(std::chrono::seconds(10));
	report("read woken by interrupt", woke ? outcome(r.rc, r.err) : "still blocked", "ok 4");
	report("read event count - before", std::to_string(r.count - before), "1");
	report("sysfs event - before", std::to_string(std::stoi(sysfs_line(sys + "/event")) - before), "1");
	report("interrupt quietened", quiet_irq(bar, pci) ? "yes" : "no", "yes");

	pollfd p{fd, POLLIN, 0};
	auto c = now(poll(&p, 1, 0));
	report("poll after the event was read", outcome(c), "ok 0");
	raise_irq(bar);
	c = now(poll(&p, 1, 10000));
	report("poll woken by interrupt", outcome(c) + " revents " + std::to_string(p.revents),
	       "ok 1 revents " + std::to_string(POLLIN));
	int32_t count = 0;
	c = now(read(fd, &count, 4));
	report("read after poll", outcome(c), "ok 4");
	report("read event count - before", std::to_string(count - before), "2");
	report("interrupt quietened", quiet_irq(bar, pci) ? "yes" : "no", "yes");
}

// Unbinds the device under a reader blocked in read(); the uio core must
// wake it with EIO and answer every later call on the fd as documented.
void check_unbind(int fd, const std::string &pci)
{
	blocked_read r(fd);
	report("read blocks before unbind", r.still_blocked_after(std::chrono::milliseconds(500)) ? "yes" : "no", "yes");
	{
		std::ofstream unbind("/sys/bus/pci/devices/" + pci + "/driver/unbind");
		unbind << pci << std::flush;
		report("unbind", unbind ? "ok" : "failed", "ok");
	}
	bool woke = r.finishes_within(std::chrono::seconds(10));
	report("blocked read at unbind", woke ? outcome(r.rc, r.err) : "still blocked", "EIO");
	int32_t v = 1;
	auto c = now(read(fd, &v, 4));
	report("read after unbind", outcome(c), "EIO");
	c = now(write(fd, &v, 4));
	report("write after unbind", outcome(c), "EINVAL");
	// uio_poll returns -EIO as a poll mask: every requested bit plus ERR/HUP.
	pollfd pf{fd, POLLIN, 0};
	c = now(poll(&pf, 1, 0));
	report("poll after unbind", outcome(c) + " revents " + std::to_string(pf.revents),
	       "ok 1 revents " + std::to_string(POLLIN | POLLERR | POLLHUP));
	void *p = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
	const int mmap_err = errno;
	report("mmap after unbind", p == MAP_FAILED ? outcome(-1, mmap_err) : "mapped", "EINVAL");
	if (p != MAP_FAILED)
		munmap(p, 4096);
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: %s PCI_ADDRESS\n", argv[0]);
		return 2;
	}
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	const std::string pci = argv[1];
	std::string uio;
	for (int n = 0; n < 64 && uio.empty(); n++)
		if (access(("/sys/bus/pci/devices/" + pci + "/uio/uio" + std::to_string(n)).c_str(), F_OK) == 0)
			uio = "uio" + std::to_string(n);
	if (uio.empty()) {
		std::fprintf(stderr, "%s has no uio device (not bound to uio_pci_generic?)\n", pci.c_str());
		return 2;
	}
	const std::string sys = "/sys/class/uio/" + uio;
	report("uio name", sysfs_line(sys + "/name"), "uio_pci_generic");
	size_t map_size = std::stoul(sysfs_line(sys + "/maps/map0/size"), nullptr, 0);

	unique_fd fd(open(("/dev/" + uio).c_str(), O_RDWR | O_CLOEXEC));
	if (fd.get() < 0) {
		std::perror("open uio");
		return 2;
	}
	{
		bar_mapping bar(fd.get(), map_size);
		report("map0 mmap", bar.ok() ? "ok" : outcome(-1, bar.error()), "ok");
		if (!bar.ok())
			return 1;
		char id[16];
		std::snprintf(id, sizeof(id), "%#x", bar.reg(edu_id) & 0xffff);
		report("edu id low half", id, "0xed");
		check_sizes_and_nonblocking("/dev/" + uio);
		check_interrupts(fd.get(), bar, pci, sys);
	}
	check_unbind(fd.get(), pci);
	return failures ? 1 : 0;
}
