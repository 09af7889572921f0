// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Builds current-error sense data in either format SPC-5 defines: fixed
// (response code 0x70) or descriptor (0x72). Which one an initiator gets is its
// choice (the D_SENSE bit of the control mode page, REQUEST SENSE's DESC bit),
// so every error is described once, as a sense_builder, and rendered late.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "scsi_constants.h"

namespace tcmud::scsi {

// The sense-key-specific field pointer (SPC-5 4.4.2.2.2): which byte, and
// optionally which bit, of the CDB or of the parameter list was wrong.
struct field_pointer {
	bool in_cdb = true;  // C/D bit: 1 = CDB, 0 = parameter list
	uint16_t byte = 0;
	int8_t bit = -1;     // 0..7, or -1 for "no bit pointer" (BPV = 0)
};

// The pointers the SCSI layer uses; bit -1 when the whole byte is the field.
constexpr field_pointer cdb_field(uint16_t byte, int8_t bit = -1)
{
	return {.in_cdb = true, .byte = byte, .bit = bit};
}

constexpr field_pointer parameter_field(uint16_t byte, int8_t bit = -1)
{
	return {.in_cdb = false, .byte = byte, .bit = bit};
}

// The two sense data formats (SPC-5 4.4): the initiator picks one with the
// control mode page's D_SENSE bit, REQUEST SENSE with its DESC bit.
enum class sense_format : uint8_t { fixed, descriptor };

constexpr sense_format sense_format_for(bool descriptor)
{
	return descriptor ? sense_format::descriptor : sense_format::fixed;
}

class sense_builder {
public:
	// Fixed format: 18 bytes. Descriptor format: 8 bytes plus descriptors.
	static constexpr std::size_t FIXED_LENGTH = 18;
	static constexpr std::size_t DESCRIPTOR_HEADER_LENGTH = 8;

	constexpr sense_builder(sense_key key, asc_ascq code) : key_(key), code_(code) {}

	// The INFORMATION field: an LBA, or the miscompare offset.
	constexpr sense_builder &information(uint64_t value)
	{
		information_ = value;
		return *this;
	}

	constexpr sense_builder &field(field_pointer pointer)
	{
		field_ = pointer;
		return *this;
	}

	sense_key key() const { return key_; }
	asc_ascq code() const { return code_; }

	// Writes the sense data into out (truncating if it is too small) and
	// returns the number of bytes written.
	std::size_t build(sense_format format, std::span<uint8_t> out) const;

private:
	std::size_t build_fixed(std::span<uint8_t> out) const;
	std::size_t build_descriptor(std::span<uint8_t> out) const;
	void put_sense_key_specific(std::span<uint8_t, 3> out) const;

	sense_key key_;
	asc_ascq code_;
	std::optional<uint64_t> information_;
	std::optional<field_pointer> field_;
};

// The sense key of current or deferred sense data in either format (fixed
// 70h/71h: byte 2; descriptor 72h/73h: byte 1), or -1 if `sense` is neither.
int sense_key_of(std::span<const uint8_t> sense);

} // namespace tcmud::scsi
