// SPDX-License-Identifier: GPL-2.0-or-later
#include "rbd/rbd_queue.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>

#include "log/log.h"
#include "rbd/rbd_backstore.h"
#include "tcmud/io_engine.h"

namespace tcmud {

struct rbd_queue::request {
	rbd_queue *queue = nullptr;
	void *box = nullptr;           // the queue's mailbox, for librbd_done
	block_io *io = nullptr;
	rbd_completion_t completion = nullptr;
	request *next = nullptr;       // on the mailbox list
	bool flushing = false;         // the flush after a FUA write (cache on)
	uint64_t unflushed_seen = 0;   // a flush: the queue's unflushed count at its start
	uint64_t mismatch = 0;         // compare_and_write: librbd's image offset
	// compare_and_write from scattered buffers, or more iovecs than librbd
	// takes: one flat copy. Keeps its capacity across reuse.
	std::vector<char> flat;
};

namespace {

bool is_write(block_op op)
{
	return op == block_op::write || op == block_op::discard ||
	       op == block_op::write_zeroes || op == block_op::compare_and_write;
}

// librbd refuses more iovecs than this in one readv/writev.
constexpr size_t max_iov = IOV_MAX;
// The most rbd_aio_compare_and_write takes: one sector, not crossing one.
constexpr uint64_t caw_sector = 512;

void gather(std::span<const iovec> iov, std::vector<char> &flat, uint64_t length)
{
	flat.resize(length);
	uint64_t at = 0;
	for (const iovec &v : iov) {
		uint64_t n = std::min<uint64_t>(v.iov_len, length - at);
		std::memcpy(flat.data() + at, v.iov_base, n);
		at += n;
	}
}

void scatter(const std::vector<char> &flat, std::span<const iovec> iov)
{
	uint64_t at = 0;
	for (const iovec &v : iov) {
		uint64_t n = std::min<uint64_t>(v.iov_len, flat.size() - at);
		std::memcpy(v.iov_base, flat.data() + at, n);
		at += n;
	}
}

} // namespace

setup_result<std::unique_ptr<rbd_queue>> rbd_queue::open(rbd_backstore &store, io_engine &engine,
							  rbd_image_t image, bool owns_image)
{
	// Blocking, so that io_uring waits for it instead of failing the read
	// with -EAGAIN. librbd's threads still never block writing it: a write
	// blocks only at a count of 2^64 - 2, and each write follows a reset.
	unique_fd efd(eventfd(0, EFD_CLOEXEC));
	if (!efd) {
		setup_error e{errno, "rbd queue: eventfd"};
		if (owns_image)
			rbd_close(image);
		return e;
	}
	std::unique_ptr<rbd_queue> q(new rbd_queue(store, engine, image, owns_image));
	q->box_->efd = std::move(efd);
	q->arm();
	return q;
}

rbd_queue::rbd_queue(rbd_backstore &store, io_engine &engine, rbd_image_t image,
		     bool owns_image)
	: store_(store), engine_(engine), image_(image), owns_image_(owns_image)
{
	signal_.queue = this;
	waiter_.queue = this;
	store_.add_probe(probe_.get());
}

// The probe goes last: a reopen in progress waits (holding the probe list)
// for this queue's requests, which only this thread can reap.
rbd_queue::~rbd_queue()
{
	if (in_flight_ > 0) {
		log_error(store_.log_prefix(), "rbd queue closed with %zu requests in flight; "
			  "waiting for librbd to finish them", in_flight_);
		size_t left = wait_for_stragglers();
		if (left > 0) {
			// librbd would call back into freed memory: keep what it
			// touches (requests, mailbox, eventfd and, if ours, the
			// image) for good rather than risk that.
			log_error(store_.log_prefix(), "%zu rbd requests never finished; "
				  "their memory is leaked on purpose", left);
			for (auto &req : pool_)
				(void)req.release();
			(void)box_.release();
			// Stays listed: a reopen must not close the session
			// under those requests.
			(void)probe_.release();
			return;
		}
	}
	store_.remove_probe(probe_.get());
	if (owns_image_)
		rbd_close(image_);
}

// Destruction with requests still in librbd (an owner that did not drain):
// reap them without completing them, for at most the OSD op timeout.
size_t rbd_queue::wait_for_stragglers()
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
	while (in_flight_ > 0 && std::chrono::steady_clock::now() < deadline) {
		// The fd blocks: read it only when poll says it is readable
		// (the ring's pending read may take the count first; the
		// list is checked either way).
		pollfd p{box_->efd.get(), POLLIN, 0};
		if (::poll(&p, 1, 100) > 0) {
			uint64_t count;
			(void)!::read(box_->efd.get(), &count, sizeof(count));
		}
		for (request *r = box_->head.exchange(nullptr, std::memory_order_acquire); r;
		     r = r->next) {
			rbd_aio_release(r->completion);
			set_in_flight(in_flight_ - 1);
		}
	}
	return in_flight_;
}

// The count the reopening thread waits on: stored after the release of the
// completion, so that zero means librbd has nothing of ours.
void rbd_queue::set_in_flight(size_t n)
{
	in_flight_ = n;
	probe_->in_flight.store(n, std::memory_order_release);
}

void rbd_queue::arm()
{
	io_uring_sqe *sqe = engine_.get_sqe(&signal_);
	if (!sqe) {
		engine_.wait_for_sqe(&waiter_);
		return;
	}
	io_uring_prep_read(sqe, box_->efd.get(), &box_->count, sizeof(box_->count), 0);
	armed_ = true;
}

// librbd's thread. Must not block and must not touch anything but the
// request and the list; the queue thread does the rest.
void rbd_queue::librbd_done(rbd_completion_t, void *arg)
{
	auto *req = static_cast<request *>(arg);
	auto *box = static_cast<mailbox *>(req->box);
	request *head = box->head.load(std::memory_order_relaxed);
	do {
		req->next = head;
	} while (!box->head.compare_exchange_weak(head, req, std::memory_order_release,
						  std::memory_order_relaxed));
	// Only the push onto an empty list signals: the queue thread takes
	// the whole list after each signal, so later pushes ride along.
	if (head == nullptr) {
		uint64_t one = 1;
		(void)!::write(box->efd.get(), &one, sizeof(one));
	}
}

// The counter is already reset by the read itself: nothing to read here.
void rbd_queue::on_signal(int64_t result)
{
	armed_ = false;
	if (result < 0 && result != -EINTR && !logged_signal_error_) {
		log_error(store_.log_prefix(), "rbd completion read failed: %s (re-armed)",
			  strerror(int(-result)));
		logged_signal_error_ = true;
	}
	arm();
	reap(box_->head.exchange(nullptr, std::memory_order_acquire));
}

// The list is newest first; completing oldest first keeps the order in
// which librbd finished them.
void rbd_queue::reap(request *list)
{
	request *fifo = nullptr;
	while (list) {
		request *next = list->next;
		list->next = fifo;
		fifo = list;
		list = next;
	}
	while (fifo) {
		request *req = fifo;
		fifo = fifo->next;
		int64_t result = rbd_aio_get_return_value(req->completion);
		rbd_aio_release(req->completion);
		req->completion = nullptr;
		set_in_flight(in_flight_ - 1);
		finish(req, result);
	}
}

rbd_queue::request *rbd_queue::acquire(block_io &io)
{
	if (free_.empty()) {
		pool_.push_back(std::make_unique<request>());
		pool_.back()->queue = this;
		pool_.back()->box = box_.get();
		free_.push_back(pool_.back().get());
	}
	request *req = free_.back();
	free_.pop_back();
	req->io = &io;
	req->flushing = false;
	req->mismatch = 0;
	return req;
}

int rbd_queue::validate(const block_io &io) const
{
	// A fence may have dropped writes the cache had acknowledged: this
	// SYNCHRONIZE CACHE must not say they are safe.
	if (io.op == block_op::flush)
		return store_.take_lost_writes() ? -EIO : 0;
	if (io.op == block_op::prefetch)
		return -EOPNOTSUPP;
	uint64_t size = store_.size_bytes();
	if (io.offset > size || io.length > size - io.offset)
		return -EINVAL;
	uint64_t total = 0;
	for (const iovec &v : io.iov)
		total += v.iov_len;
	if ((io.op == block_op::read || io.op == block_op::write) && total != io.length)
		return -EINVAL;
	if (io.op == block_op::compare_and_write && total < 2 * io.length)
		return -EINVAL;
	// librbd's compare-and-write is atomic only inside one 512-byte
	// sector (it refuses anything wider with EINVAL, after the fact): the
	// SCSI layer does a wider one itself, under its range lock.
	if (io.op == block_op::compare_and_write &&
	    io.offset % caw_sector + io.length > caw_sector)
		return -EOPNOTSUPP;
	return is_write(io.op) ? store_.write_gate() : 0;
}

void rbd_queue::submit(block_io &io)
{
	io.progress = 0;
	int err;
	{
		window w(*probe_);
		err = validate(io);
		if (err == 0 && (io.op == block_op::read || io.op == block_op::write) &&
		    io.length == 0)
			err = 1;
		if (err == 0) {
			request *req = acquire(io);
			err = start(req);
			if (err == 0)
				return;
			free_.push_back(req);
		}
	}
	// The SCSI layer's driver takes a completion from inside submit()
	// (ram does the same); nothing reached librbd.
	io.done->io_done(err == 1 ? 0 : err);
}

// Inside the window: on the device's current handle, or -ENOTCONN while it
// is being reopened.
int rbd_queue::start(request *req)
{
	rbd_image_t img = image();
	return img ? start_on(req, img) : -ENOTCONN;
}

int rbd_queue::start_on(request *req, rbd_image_t img)
{
	block_io &io = *req->io;
	int r = rbd_aio_create_completion(req, librbd_done, &req->completion);
	if (r < 0)
		return r;
	const auto iovcnt = static_cast<int>(io.iov.size());
	switch (io.op) {
	case block_op::read:
		if (io.iov.size() > max_iov) {
			req->flat.resize(io.length);
			r = rbd_aio_read(img, io.offset, io.length, req->flat.data(),
					 req->completion);
		} else {
			r = rbd_aio_readv(img, io.iov.data(), iovcnt, io.offset, req->completion);
		}
		break;
	case block_op::write:
		if (io.iov.size() > max_iov) {
			gather(io.iov, req->flat, io.length);
			r = rbd_aio_write(img, io.offset, io.length, req->flat.data(),
					  req->completion);
		} else {
			r = rbd_aio_writev(img, io.iov.data(), iovcnt, io.offset, req->completion);
		}
		break;
	case block_op::flush:
		req->unflushed_seen = probe_->unflushed.load(std::memory_order_acquire);
		r = rbd_aio_flush(img, req->completion);
		break;
	case block_op::discard:
		r = rbd_aio_discard(img, io.offset, io.length, req->completion);
		break;
	case block_op::write_zeroes:
		r = rbd_aio_write_zeroes(img, io.offset, io.length, req->completion, 0, 0);
		break;
	case block_op::compare_and_write: {
		const char *both;
		if (io.iov.size() == 1) {
			both = static_cast<const char *>(io.iov[0].iov_base);
		} else {
			gather(io.iov, req->flat, 2 * io.length);
			both = req->flat.data();
		}
		ssize_t sr = rbd_aio_compare_and_write(img, io.offset, io.length, both,
						       both + io.length, req->completion,
						       &req->mismatch, 0);
		r = sr < 0 ? int(sr) : 0;
		break;
	}
	case block_op::prefetch:
		r = -EOPNOTSUPP;
		break;
	}
	if (r < 0) {
		rbd_aio_release(req->completion);
		req->completion = nullptr;
		return r;
	}
	set_in_flight(in_flight_ + 1);
	return 0;
}

// The flush that makes a FUA write durable when librbd's cache is on (with
// it off, librbd completes a write only once the OSDs have it).
int rbd_queue::start_flush(request *req)
{
	window w(*probe_);
	rbd_image_t img = image();
	if (!img)
		return -ENOTCONN;
	int r = rbd_aio_create_completion(req, librbd_done, &req->completion);
	if (r < 0)
		return r;
	r = rbd_aio_flush(img, req->completion);
	if (r < 0) {
		rbd_aio_release(req->completion);
		req->completion = nullptr;
		return r;
	}
	req->flushing = true;
	set_in_flight(in_flight_ + 1);
	return 0;
}

void rbd_queue::finish(request *req, int64_t result)
{
	block_io &io = *req->io;
	if (result < 0) {
		if (result == -EILSEQ && io.op == block_op::compare_and_write && !req->flushing) {
			// The SCSI layer wants the first differing byte counted
			// from the start of the compared range. Pacific's librbd
			// (16.2.15, measured) reports it that way; tcmu-runner
			// subtracts the request offset, as for an image offset.
			// Accept both: a request never starts below its own
			// length unless it starts at 0 (it lies in one 512-byte
			// sector), where the two readings agree.
			io.miscompare_offset = req->mismatch >= io.offset ? req->mismatch - io.offset
									  : req->mismatch;
		} else {
			result = store_.note_result(result, is_write(io.op));
		}
		complete(req, result);
		return;
	}
	if (io.fua && !req->flushing && is_write(io.op) && store_.cache_enabled()) {
		if (int err = start_flush(req); err < 0)
			complete(req, err);
		return;
	}
	if (store_.cache_enabled()) {
		if (io.op == block_op::flush)
			forget_flushed(req->unflushed_seen);
		else if (is_write(io.op) && !req->flushing)
			probe_->unflushed.fetch_add(1, std::memory_order_acq_rel);
	}
	if (io.op == block_op::read && io.iov.size() > max_iov)
		scatter(req->flat, io.iov);
	bool moves = io.op == block_op::read || io.op == block_op::write;
	complete(req, moves ? int64_t(io.length) : 0);
}

// A flush succeeded: the writes counted when it started are on the OSDs.
// (The keeper may have zeroed the count meanwhile: never below zero.)
void rbd_queue::forget_flushed(uint64_t seen)
{
	uint64_t now = probe_->unflushed.load(std::memory_order_acquire);
	while (!probe_->unflushed.compare_exchange_weak(now, now - std::min(now, seen),
							 std::memory_order_acq_rel))
		;
}

void rbd_queue::complete(request *req, int64_t result)
{
	io_completion *done = req->io->done;
	req->io = nullptr;
	// Free the slot first: the callback may submit the next request.
	free_.push_back(req);
	done->io_done(result);
}

} // namespace tcmud
