// SPDX-License-Identifier: GPL-2.0-or-later
#include "sense_builder.h"

#include <algorithm>
#include <array>

#include "byte_order.h"

namespace tcmud::scsi {

namespace {

constexpr uint8_t RESPONSE_CODE_FIXED_CURRENT = 0x70;
constexpr uint8_t RESPONSE_CODE_DESCRIPTOR_CURRENT = 0x72;
constexpr uint8_t FIXED_VALID = 0x80;

// Descriptor types (SPC-5 table 54).
constexpr uint8_t DESC_INFORMATION = 0x00;
constexpr uint8_t DESC_SENSE_KEY_SPECIFIC = 0x02;
constexpr uint8_t INFORMATION_DESC_LENGTH = 12;
constexpr uint8_t SENSE_KEY_SPECIFIC_DESC_LENGTH = 8;

constexpr uint8_t SKSV = 0x80;
constexpr uint8_t SKS_C_D = 0x40;
constexpr uint8_t SKS_BPV = 0x08;

std::size_t copy_out(std::span<const uint8_t> built, std::span<uint8_t> out)
{
	std::size_t n = std::min(built.size(), out.size());
	std::copy_n(built.begin(), n, out.begin());
	return n;
}

} // namespace

int sense_key_of(std::span<const uint8_t> sense)
{
	// 70h/71h and 72h/73h: bit 0 tells current from deferred.
	if (sense.size() > 2 && (sense[0] & 0x7e) == RESPONSE_CODE_FIXED_CURRENT)
		return sense[2] & 0x0f;
	if (sense.size() > 1 && (sense[0] & 0x7e) == RESPONSE_CODE_DESCRIPTOR_CURRENT)
		return sense[1] & 0x0f;
	return -1;
}

std::size_t sense_builder::build(sense_format format, std::span<uint8_t> out) const
{
	return format == sense_format::descriptor ? build_descriptor(out) : build_fixed(out);
}

void sense_builder::put_sense_key_specific(std::span<uint8_t, 3> out) const
{
	if (!field_)
		return;
	uint8_t flags = SKSV;
	if (field_->in_cdb)
		flags |= SKS_C_D;
	if (field_->bit >= 0)
		flags |= static_cast<uint8_t>(SKS_BPV | (field_->bit & 0x7));
	out[0] = flags;
	put_be16(out, 1, field_->byte);
}

std::size_t sense_builder::build_fixed(std::span<uint8_t> out) const
{
	std::array<uint8_t, FIXED_LENGTH> s{};
	s[0] = RESPONSE_CODE_FIXED_CURRENT;
	s[2] = key_;
	// The fixed format's INFORMATION is 4 bytes; SPC-5 says a value that
	// does not fit is reported with VALID = 0 (descriptor format has 8).
	if (information_ && *information_ <= UINT32_MAX) {
		s[0] |= FIXED_VALID;
		put_be32(s, 3, *information_);
	}
	s[7] = FIXED_LENGTH - 8;  // additional sense length
	s[12] = code_.asc;
	s[13] = code_.ascq;
	put_sense_key_specific(std::span<uint8_t, 3>(s.data() + 15, 3));
	return copy_out(s, out);
}

std::size_t sense_builder::build_descriptor(std::span<uint8_t> out) const
{
	std::array<uint8_t, DESCRIPTOR_HEADER_LENGTH + INFORMATION_DESC_LENGTH +
				    SENSE_KEY_SPECIFIC_DESC_LENGTH> s{};
	s[0] = RESPONSE_CODE_DESCRIPTOR_CURRENT;
	s[1] = key_;
	s[2] = code_.asc;
	s[3] = code_.ascq;
	std::size_t len = DESCRIPTOR_HEADER_LENGTH;
	if (information_) {
		s[len] = DESC_INFORMATION;
		s[len + 1] = INFORMATION_DESC_LENGTH - 2;
		s[len + 2] = FIXED_VALID;
		put_be64(s, len + 4, *information_);
		len += INFORMATION_DESC_LENGTH;
	}
	if (field_) {
		s[len] = DESC_SENSE_KEY_SPECIFIC;
		s[len + 1] = SENSE_KEY_SPECIFIC_DESC_LENGTH - 2;
		put_sense_key_specific(std::span<uint8_t, 3>(s.data() + len + 4, 3));
		len += SENSE_KEY_SPECIFIC_DESC_LENGTH;
	}
	s[7] = static_cast<uint8_t>(len - DESCRIPTOR_HEADER_LENGTH);
	return copy_out(std::span<const uint8_t>(s.data(), len), out);
}

} // namespace tcmud::scsi
