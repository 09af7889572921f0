// SPDX-License-Identifier: GPL-2.0-or-later
// The queue worker and the kernel's fixed data area: with
// TCMU_MAILBOX_FLAG_CAP_DATA_FIXED in the (model's) mailbox the worker
// registers the data area on its io_uring and the file backstore moves READ
// and WRITE data through READ_FIXED/WRITE_FIXED; without the bit, or with
// fixed_buffers off, nothing is registered; a registration the kernel
// refuses is logged and the queue serves all the same.
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/queue_worker.h"
#include "file/file_queue.h"
#include "log/log.h"
#include "ring/tcmu_abi.h"
#include "worker_rig.h"
#include "drop_cap_ipc_lock.h"

using namespace tcmud;
using namespace tcmud::test;

namespace {

constexpr uint32_t block = 512;
constexpr uint64_t blocks = 2048;
constexpr uint16_t stock_flags = 0x7;
constexpr uint16_t fixed_flags = 0x7 | TCMUD_MB_FLAG_CAP_DATA_FIXED;

std::vector<uint8_t> cdb10(uint8_t op, uint32_t lba, uint16_t count)
{
	return {op, 0, uint8_t(lba >> 24), uint8_t(lba >> 16), uint8_t(lba >> 8), uint8_t(lba),
		0, uint8_t(count >> 8), uint8_t(count), 0};
}

// What the worker's file queue did, taken when the worker closes it (on
// the worker's thread; read after the worker is gone).
struct queue_record {
	std::atomic<bool> fixed{false};
	std::atomic<uint64_t> fixed_sqes{0};
};

class recorded_queue final : public backstore_queue {
public:
	recorded_queue(std::unique_ptr<backstore_queue> inner, queue_record &rec)
		: inner_(std::move(inner)), rec_(rec)
	{
	}
	~recorded_queue() override
	{
		auto &fq = static_cast<file_queue &>(*inner_);
		rec_.fixed = fq.uses_fixed_buffers();
		rec_.fixed_sqes = fq.fixed_buffer_sqes();
	}
	void submit(block_io &io) override { inner_->submit(io); }
	io_engine *engine() override { return inner_->engine(); }

private:
	std::unique_ptr<backstore_queue> inner_;
	queue_record &rec_;
};

class recorded_store final : public backstore {
public:
	explicit recorded_store(backstore &real) : real_(real) {}
	uint64_t size_bytes() const override { return real_.size_bytes(); }
	backstore_caps caps() const override { return real_.caps(); }
	setup_result<std::unique_ptr<backstore_queue>> open_queue(io_engine &engine) override
	{
		auto q = real_.open_queue(engine);
		if (!q)
			return q;
		return std::make_unique<recorded_queue>(std::move(*q), record);
	}
	queue_record record;

private:
	backstore &real_;
};

struct log_lines {
	std::mutex mutex;
	std::vector<std::string> lines;
	static void sink(void *ctx, log_level, std::string_view line)
	{
		auto *self = static_cast<log_lines *>(ctx);
		std::lock_guard lock(self->mutex);
		self->lines.emplace_back(line);
	}
	log_lines() { set_log_sink(sink, this); }
	~log_lines() { set_log_sink(nullptr, nullptr); }
	bool contains(std::string_view text)
	{
		std::lock_guard lock(mutex);
		for (const auto &l : lines)
			if (l.find(text) != std::string::npos)
				return true;
		return false;
	}
};

struct outcome {
	bool registered = false;
	bool queue_fixed = false;
	uint64_t fixed_sqes = 0;
	bool data_right = false;
};

// A WRITE(10) of 16 blocks, then a READ(10) of them, on a worker over a
// model whose mailbox has `flags`.
outcome round_trip(uint16_t flags, bool fixed_buffers = true, uint32_t data_blocks = 64)
{
	std::unique_ptr<recorded_store> store;
	outcome out;
	{
		single_queue_rig rig(block, blocks, "file/fixed:", "file", 32,
				     [&](queue_params &qp) {
					     store = std::make_unique<recorded_store>(*qp.store);
					     qp.store = store.get();
					     qp.fixed_buffers = fixed_buffers;
				     },
				     model_options{.data_blocks = data_blocks, .flags = flags});
		out.registered = rig.worker->data_area_registered();
		std::vector<uint8_t> data(16 * block);
		for (size_t i = 0; i < data.size(); ++i)
			data[i] = uint8_t(i * 11 + 5);
		REQUIRE(rig.model.queue_command(cdb10(0x2a, 40, 16), data));
		rig.interrupt();
		rig.collect(1);
		REQUIRE(rig.model.completions()[0].scsi_status == 0);
		REQUIRE(rig.model.queue_command(cdb10(0x28, 40, 16), {}, data.size()));
		rig.interrupt();
		rig.collect(2);
		const auto &rd = rig.model.completions()[1];
		REQUIRE(rd.scsi_status == 0);
		out.data_right = rd.data_in == data;
	}
	out.queue_fixed = store->record.fixed;
	out.fixed_sqes = store->record.fixed_sqes;
	return out;
}

} // namespace

TEST_CASE("queue worker: with CAP_DATA_FIXED the data area is registered and READ/WRITE go fixed")
{
	set_log_level(log_level::warn);
	outcome o = round_trip(fixed_flags);
	CHECK(o.registered);
	CHECK(o.queue_fixed);
	CHECK(o.fixed_sqes == 2); // the WRITE's and the READ's, one block run each
	CHECK(o.data_right);
}

TEST_CASE("queue worker: without CAP_DATA_FIXED nothing is registered")
{
	set_log_level(log_level::warn);
	outcome o = round_trip(stock_flags);
	CHECK_FALSE(o.registered);
	CHECK_FALSE(o.queue_fixed);
	CHECK(o.fixed_sqes == 0);
	CHECK(o.data_right);
	// The multi-queue bit alone is no promise either.
	outcome mq = round_trip(stock_flags | TCMUD_MB_FLAG_CAP_MQ);
	CHECK_FALSE(mq.registered);
	CHECK(mq.fixed_sqes == 0);
}

TEST_CASE("queue worker: fixed_buffers = false keeps the data area unregistered")
{
	set_log_level(log_level::warn);
	outcome o = round_trip(fixed_flags, false);
	CHECK_FALSE(o.registered);
	CHECK(o.fixed_sqes == 0);
	CHECK(o.data_right);
}

namespace {

// Without CAP_IPC_LOCK the kernel charges pinned pages to RLIMIT_MEMLOCK
// (newer kernels the io_uring's own rings too): 1 MiB lets the worker's
// io_uring be set up but not a 4 MiB data area be registered. The exit
// code says which step failed.
int refused_child()
{
	if (int rc = tcmud::test::drop_cap_ipc_lock())
		return rc;
	rlimit small{1 << 20, 1 << 20};
	if (setrlimit(RLIMIT_MEMLOCK, &small) != 0)
		return 12;
	try {
		log_lines log;
		set_log_level(log_level::info);
		outcome o = round_trip(fixed_flags, true, 1024);
		if (o.registered || o.queue_fixed || o.fixed_sqes != 0)
			return 13;
		if (!o.data_right)
			return 14;
		if (!log.contains("reads and writes use plain buffers"))
			return 15;
	} catch (...) {
		return 16;
	}
	return 0;
}

} // namespace

TEST_CASE("queue worker: a registration refused for RLIMIT_MEMLOCK is logged and the queue serves")
{
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(refused_child());
	int status = 0;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	REQUIRE(WIFEXITED(status));
	INFO("child exit code (the step that failed): " << WEXITSTATUS(status));
	CHECK(WEXITSTATUS(status) == 0);
}
