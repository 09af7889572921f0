// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A served device as an EXTENDED COPY target of the daemon's other devices
// (scsi/copy_targets.h): it shares the device's backstore and logical unit,
// so a copy that holds it keeps both alive after the device is removed.
#include <memory>
#include <string>

#include "log/log.h"
#include "scsi/copy_targets.h"
#include "scsi/logical_unit.h"
#include "tcmud/backstore.h"

namespace tcmud {

class device_copy_target final : public scsi::copy_target {
public:
	device_copy_target(std::shared_ptr<backstore> store, std::shared_ptr<scsi::logical_unit> lu,
			   std::string log_prefix)
		: store_(std::move(store)), lu_(std::move(lu)), log_prefix_(std::move(log_prefix))
	{
	}
	scsi::logical_unit &lu() override { return *lu_; }
	// Backstores open queues from any thread; this one is driven by the
	// copying queue's io_uring, so its completions arrive on that thread.
	std::unique_ptr<backstore_queue> open_queue(backstore_queue &caller) override
	{
		io_engine *engine = caller.engine();
		if (!engine)
			return nullptr;
		auto opened = store_->open_queue(*engine);
		if (!opened) {
			// The initiator gets COPY ABORTED, target not reachable.
			log_warn(log_prefix_, "EXTENDED COPY cannot reach this device: %s",
				 opened.error().what().c_str());
			return nullptr;
		}
		return std::move(*opened);
	}

private:
	std::shared_ptr<backstore> store_;
	std::shared_ptr<scsi::logical_unit> lu_;
	std::string log_prefix_;
};

} // namespace tcmud
