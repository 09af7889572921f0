// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Anonymous memory as a backstore, shared by all queues of a device. Every
// request is carried out inside submit() with a memory copy, so a queue's
// commands complete without touching its io_uring; discard and zeroing
// give the pages back to the kernel where whole pages are covered.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tcmud/backstore.h"
#include "tcmud/mapped_region.h"

namespace tcmud {

// "" or a label of [A-Za-z0-9._-], at most 64 characters: the cfgstring
// names nothing (there is no backing file) but may tell devices apart in
// targetcli. EINVAL and the reason if it is anything else.
setup_result<void> check_ram_config(std::string_view cfgstring);

class ram_backstore final : public backstore {
public:
	// handler_ops::open; the caller logs a failure. Refuses a size that is
	// zero or larger than the machine's memory (the mapping is not reserved
	// up front: a LUN larger than RAM would end with the OOM killer, not
	// with an error).
	static setup_result<std::unique_ptr<backstore>> open(const backstore_config &cfg);

	uint64_t size_bytes() const override { return memory_.bytes().size(); }
	backstore_caps caps() const override;
	setup_result<std::unique_ptr<backstore_queue>> open_queue(io_engine &engine) override;

	// The queue's work, on whichever queue thread calls it. 0 or the bytes
	// moved, or -EIO for a range outside the device.
	int64_t perform(const block_io &io);

private:
	explicit ram_backstore(mapped_region memory) : memory_(std::move(memory)) {}
	void zero(uint64_t offset, uint64_t length);

	mapped_region memory_;
};

} // namespace tcmud
