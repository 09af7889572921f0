// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A backstore on one regular file or block device, shared by all queues of a
// device. It owns the fd; each queue submits through its own io_uring (see
// file_queue). Everything here is decided once, at open: the size served,
// O_DIRECT, and which fallocate modes the file system supports; only the
// served size may change later (resize(), on RECONFIG_DEVICE dev_size).
#include <atomic>
#include <memory>
#include <string>

#include "tcmud/unique_fd.h"
#include "tcmud/backstore.h"

namespace tcmud {

class file_backstore final : public backstore {
public:
	// handler_ops::open; the caller logs a failure.
	static setup_result<std::unique_ptr<file_backstore>> open(const backstore_config &cfg);

	uint64_t size_bytes() const override { return size_.load(std::memory_order_acquire); }
	backstore_caps caps() const override { return caps_; }
	setup_result<std::unique_ptr<backstore_queue>> open_queue(io_engine &engine) override;
	setup_result<void> resize(uint64_t new_size) override;

	bool direct() const { return direct_; }

private:
	file_backstore(unique_fd fd, uint64_t size, backstore_caps caps,
		       bool direct, std::string path, bool extend, std::string log_prefix);

	unique_fd fd_;
	// Read by every queue's bounds check; written only by resize().
	std::atomic<uint64_t> size_;
	backstore_caps caps_;
	bool direct_;
	std::string path_;
	bool extend_;   // cfgstring extend=1: resize() may grow a regular file
	std::string log_prefix_;
};

} // namespace tcmud
