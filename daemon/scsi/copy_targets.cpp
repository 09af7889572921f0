// SPDX-License-Identifier: GPL-2.0-or-later
#include "copy_targets.h"

#include <algorithm>

namespace tcmud::scsi {

namespace {

// The IEEE company ID the Linux SCSI target uses in its NAA designators, so
// that a LUN moved between LIO's own backstores and tcmud keeps its NAA.
constexpr uint32_t LIO_COMPANY_ID = 0x001405;

int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

} // namespace

// NAA 6 (SPC-5 7.7.6.6.5): 4 bits NAA, 24 bits company ID, then 100 bits
// of vendor identifier filled with the serial's hex digits in order (other
// characters skipped).
std::optional<naa_id> naa_from_serial(std::string_view serial)
{
	naa_id naa{};
	naa[0] = static_cast<uint8_t>(0x60 | (LIO_COMPANY_ID >> 20));
	naa[1] = static_cast<uint8_t>(LIO_COMPANY_ID >> 12);
	naa[2] = static_cast<uint8_t>(LIO_COMPANY_ID >> 4);
	naa[3] = static_cast<uint8_t>((LIO_COMPANY_ID & 0xf) << 4);
	std::size_t nibble = 7;  // the low nibble of byte 3
	for (char c : serial) {
		int v = hex_value(c);
		if (v < 0)
			continue;
		if (nibble >= naa.size() * 2)
			break;
		naa[nibble / 2] |= static_cast<uint8_t>(nibble % 2 ? v : v << 4);
		nibble++;
	}
	if (nibble == 7)
		return std::nullopt;
	return naa;
}

copy_target_registry &copy_target_registry::global()
{
	static copy_target_registry registry;
	return registry;
}

void copy_target_registry::add(const naa_id &naa, const copy_member &who,
			       const std::shared_ptr<copy_target> &target)
{
	std::lock_guard guard(mutex_);
	targets_.push_back(entry{naa, who, target});
}

void copy_target_registry::set_policy(copy_policy may_copy)
{
	std::lock_guard guard(mutex_);
	may_copy_ = std::move(may_copy);
}

void copy_target_registry::remove(const copy_target *target)
{
	std::lock_guard guard(mutex_);
	std::erase_if(targets_, [&](const entry &e) {
		auto t = e.target.lock();
		return !t || t.get() == target;
	});
}

std::shared_ptr<copy_target> copy_target_registry::find(const naa_id &naa,
							const copy_member &from) const
{
	std::lock_guard guard(mutex_);
	for (const entry &e : targets_) {
		if (e.naa != naa)
			continue;
		if (e.who != from && !(may_copy_ && may_copy_(from, e.who)))
			continue;
		if (auto t = e.target.lock())
			return t;
	}
	return nullptr;
}

} // namespace tcmud::scsi
