// SPDX-License-Identifier: GPL-2.0-or-later
// The smallest complete use of daemon/ring on an opened TCMU uio device:
// attach to the mailbox, take what the kernel queued, answer it, publish.
// Every command is refused as an unsupported opcode (a real daemon hands it
// to daemon/scsi, see core/queue_worker.cpp). docs/ring.md shows the part
// between the docs: markers; tests/lint/doc-snippets.py keeps the two equal,
// and the build compiles this file, so the documented calls exist.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <variant>

#include "device/uio_device.h"
#include "ring/command_ring.h"

namespace tcmud::examples {

namespace {
constexpr uint8_t check_condition = 0x02;
// Fixed-format sense: ILLEGAL REQUEST, INVALID FIELD IN CDB (24h/00h).
constexpr uint8_t invalid_field_sense[18] = {0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x24, 0};
} // namespace

// Serves `uio` until its ring breaks (-EIO: the owner then resets it, see
// command_ring::reset) or reading its event count fails (-errno).
int serve_ring(uio_device &uio)
{
	// docs:begin ring-loop
	auto ring = command_ring::attach(uio.mapping(), {});
	if (!ring) {
		std::fprintf(stderr, "%s\n", ring.error().what().c_str());
		return ring.error().negative_errno();
	}
	for (;;) {
		uint32_t events;
		if (int err = uio.read_event(events); err < 0) // or poll/io_uring on uio.fd()
			return err;
		while (auto ev = ring->next()) {
			if (auto *cmd = std::get_if<ring_command>(&*ev)) {
				// Here a daemon starts the command; it may finish later,
				// with ring->complete(id, status, sense, read_len).
				ring->complete_unknown_op(cmd->cmd_id);
			} else if (auto *m = std::get_if<ring_malformed>(&*ev)) {
				if (m->needs_response)
					ring->complete(m->cmd_id, check_condition, invalid_field_sense);
				if (m->ring_broken)
					return -EIO; // action/reset_ring, then ring->reset()
			} // else a ring_tmr: abort bookkeeping; it needs no response
		}
		if (ring->publish()) // one uio write per batch of responses
			uio.notify();
	}
	// docs:end ring-loop
}

} // namespace tcmud::examples
