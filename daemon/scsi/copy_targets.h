// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The LUNs of this daemon that an EXTENDED COPY may name, by the NAA
// designator of their VPD page 0x83 (CSCD descriptor E4h), and which of
// them a given LUN may reach.
//
// TCMU does not say which initiator sent a command, so LIO's LUN masking
// and read-only mappings cannot be checked for the other LUN of a copy: an
// initiator that reaches one LUN must not read or overwrite another by
// naming its NAA (the class of CVE-2020-28374). So a copy between two
// devices needs the policy (set_policy, from tcmud.conf copy_groups) to
// allow that pair; with none set, every LUN reaches only itself.
//
// A queue thread copying to or from another device never touches that
// device's queues or threads: it opens a backstore_queue of its own on the
// other device's backstore (copy_target::open_queue), driven by its own
// io_uring, so every completion of the copy arrives on the copying thread.
// Backstores allow open_queue from any thread (backstore.h). The
// registry holds only weak references; a copy holds a shared one to its
// target for as long as it runs, which keeps the other device's backstore
// and logical unit (capacity, range lock) alive even if that device is
// removed meanwhile: the copy then finishes on a backstore nobody serves
// any more, and the last reference closes it.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "tcmud/backstore.h"

namespace tcmud::scsi {

class logical_unit;

// NAA IEEE Registered Extended designator (16 bytes), as VPD 0x83 gives it.
using naa_id = std::array<uint8_t, 16>;

// The NAA designator derived from a unit serial, as LIO derives its own
// (company ID 001405h, then the serial's hex digits). nullopt if the serial
// has no hex digit (then VPD 0x83 has no NAA designator either).
std::optional<naa_id> naa_from_serial(std::string_view serial);

// A device as the administrator names it: its configfs HBA index (user_N)
// and item name.
struct copy_member {
	uint32_t hba = 0;
	std::string device;

	bool operator==(const copy_member &) const = default;
};

// Whether two different devices may copy between each other.
using copy_policy = std::function<bool(const copy_member &a, const copy_member &b)>;

class copy_target {
public:
	virtual ~copy_target() = default;
	virtual logical_unit &lu() = 0;
	// A channel to this LUN's backstore for the calling queue thread,
	// whose own channel is `caller`; nullptr if there is none to be had
	// (the target is then not reachable).
	virtual std::unique_ptr<backstore_queue> open_queue(backstore_queue &caller) = 0;
};

class copy_target_registry {
public:
	// The daemon's registry; tests make their own.
	static copy_target_registry &global();

	void add(const naa_id &naa, const copy_member &who,
		 const std::shared_ptr<copy_target> &target);
	void remove(const copy_target *target);
	// Replaces the policy; copies already resolved run on. Empty: no
	// copies between different devices (the default).
	void set_policy(copy_policy may_copy);
	// The target `naa` names if `from` may reach it: the same device, or
	// one the policy allows. nullptr otherwise, whether or not the NAA is
	// served: the initiator learns nothing about devices it cannot reach.
	std::shared_ptr<copy_target> find(const naa_id &naa, const copy_member &from) const;

private:
	struct entry {
		naa_id naa;
		copy_member who;
		std::weak_ptr<copy_target> target;
	};
	mutable std::mutex mutex_;
	std::vector<entry> targets_;
	copy_policy may_copy_;
};

} // namespace tcmud::scsi
