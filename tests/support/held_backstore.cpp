// SPDX-License-Identifier: GPL-2.0-or-later
#include "held_backstore.h"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "tcmud/io_engine.h"

namespace tcmud::test {

class held_backstore::queue final : public backstore_queue {
public:
	queue(held_backstore &store, io_engine &engine) : store_(store), engine_(engine) {}

	void submit(block_io &io) override
	{
		auto r = std::make_unique<request>();
		r->q = this;
		r->io = &io;
		io_uring_sqe *sqe = engine_.get_sqe(r.get());
		if (!sqe)
			throw std::runtime_error("held_backstore: submission queue full");
		if (store_.hold_.load()) {
			int fds[2];
			if (pipe2(fds, O_CLOEXEC) < 0)
				throw std::runtime_error("held_backstore: pipe2 failed");
			auto g = std::make_unique<gate>();
			g->read_end = unique_fd(fds[0]);
			g->write_end = unique_fd(fds[1]);
			r->held_on = g.get();
			{
				std::lock_guard lock(store_.mutex_);
				store_.held_buffers_.emplace_back(io.iov.begin(), io.iov.end());
				store_.gates_.push_back(std::move(g));
			}
			store_.held_++;
			io_uring_prep_read(sqe, r->held_on->read_end.get(), &r->byte, 1, uint64_t(-1));
		} else {
			io_uring_prep_nop(sqe);
		}
		r.release(); // owned by the ring until it completes
	}

private:
	struct request final : io_completion {
		queue *q = nullptr;
		block_io *io = nullptr;
		held_backstore::gate *held_on = nullptr;
		char byte = 0;
		void io_done(int64_t result) override
		{
			std::unique_ptr<request> self(this);
			if (held_on) {
				q->store_.held_--;
				if (result >= 0 && held_on->result.load() < 0)
					result = held_on->result.load();
			}
			io->done->io_done(result < 0 ? result : q->perform(*io));
		}
	};

	int64_t perform(block_io &io)
	{
		std::vector<uint8_t> &b = store_.bytes_;
		if (io.offset > b.size() || io.length > b.size() - io.offset)
			return -EINVAL;
		uint64_t at = io.offset;
		switch (io.op) {
		case block_op::read:
			for (const iovec &v : io.iov) {
				std::memcpy(v.iov_base, b.data() + at, v.iov_len);
				at += v.iov_len;
			}
			return int64_t(io.length);
		case block_op::write:
			for (const iovec &v : io.iov) {
				std::memcpy(b.data() + at, v.iov_base, v.iov_len);
				at += v.iov_len;
			}
			return int64_t(io.length);
		case block_op::write_zeroes:
		case block_op::discard:
			std::memset(b.data() + io.offset, 0, io.length);
			return 0;
		case block_op::flush:
		case block_op::prefetch:
			return 0;
		case block_op::compare_and_write:  // not offered in caps
			return -EOPNOTSUPP;
		}
		return -EINVAL;
	}

	held_backstore &store_;
	io_engine &engine_;
};

held_backstore::held_backstore(uint64_t bytes) : bytes_(bytes) {}

setup_result<std::unique_ptr<backstore_queue>> held_backstore::open_queue(io_engine &engine)
{
	return std::make_unique<queue>(*this, engine);
}

void held_backstore::release(size_t index, int64_t result)
{
	std::lock_guard lock(mutex_);
	gate &g = *gates_.at(index);
	g.result.store(result);
	char x = 'x';
	if (write(g.write_end.get(), &x, 1) != 1)
		throw std::runtime_error("held_backstore: pipe write failed");
}

std::vector<std::vector<iovec>> held_backstore::held_buffers() const
{
	std::lock_guard lock(mutex_);
	return held_buffers_;
}

} // namespace tcmud::test
