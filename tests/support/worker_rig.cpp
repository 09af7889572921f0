// SPDX-License-Identifier: GPL-2.0-or-later
#include "worker_rig.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>

#include "handler_registry.h"
#include "uio_standin.h"

namespace tcmud::test {

scratch_unit::scratch_unit(uint32_t block, uint64_t blocks, const std::string &subtype,
			   const std::string &cfgstring)
{
	backstore_config bc;
	bc.subtype = subtype;
	bc.cfgstring = cfgstring;
	bc.log_prefix = subtype + "/test:";
	if (subtype == "file" && cfgstring.empty()) {
		char tmpl[] = "/tmp/tcmud-unit-XXXXXX";
		int fd = mkstemp(tmpl);
		REQUIRE(fd >= 0);
		REQUIRE(ftruncate(fd, static_cast<off_t>(blocks * block)) == 0);
		close(fd);
		file = tmpl;
		bc.cfgstring = file.string();
	}
	bc.dev_size = blocks * block;
	bc.block_size = block;
	const handler_ops *handler = find_handler(subtype);
	REQUIRE(handler);
	auto opened = handler->open(bc);
	INFO((opened ? "" : opened.error().what()));
	REQUIRE(opened);
	store = std::move(*opened);

	scsi::logical_unit_config lc;
	lc.block_size = block;
	lc.num_blocks = blocks;
	lc.caps = store->caps();
	auto created = scsi::logical_unit::create(std::move(lc));
	INFO((created.ok() ? std::string() : created.error().message));
	REQUIRE(created.ok());
	lu = std::move(*created);
}

scratch_unit::~scratch_unit()
{
	if (!file.empty())
		std::filesystem::remove(file);
}

single_queue_rig::single_queue_rig(uint32_t block, uint64_t blocks,
				   const std::string &log_prefix, const std::string &subtype,
				   size_t max_in_flight,
				   const std::function<void(queue_params &)> &tweak,
				   const model_options &ring)
	: model(ring), unit(block, blocks, subtype)
{
	REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	REQUIRE(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
	queue_params qp;
	qp.map = model.mapping();
	qp.uio = uio_channel(sv[0]);
	qp.log_prefix = log_prefix;
	qp.lu = unit.lu.get();
	qp.store = unit.store.get();
	qp.ring.max_in_flight = max_in_flight;
	if (tweak)
		tweak(qp);
	worker = std::make_unique<queue_worker>(qp);
	REQUIRE(worker->start());
}

single_queue_rig::~single_queue_rig()
{
	worker.reset();
	close(sv[0]);
	close(sv[1]);
}

void single_queue_rig::interrupt()
{
	REQUIRE(raise_uio_interrupt(sv[0], sv[1], 1));
}

size_t single_queue_rig::collect(size_t want)
{
	size_t notifies = 0;
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (model.completions().size() < want) {
		REQUIRE(std::chrono::steady_clock::now() < deadline);
		pollfd p{sv[1], POLLIN, 0};
		if (poll(&p, 1, 100) <= 0)
			continue;
		uint32_t q;
		REQUIRE(read(sv[1], &q, sizeof(q)) == sizeof(q));
		CHECK(q == 0);
		++notifies;
		model.handle_completions();
		REQUIRE_FALSE(model.broken());
	}
	return notifies;
}

} // namespace tcmud::test
