// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Big-endian field access for CDBs, parameter lists and response data: SCSI
// is big-endian on the wire whatever the host is.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace tcmud::scsi {

inline uint64_t get_be(std::span<const uint8_t> b, std::size_t off, std::size_t n)
{
	uint64_t v = 0;
	for (std::size_t i = 0; i < n; i++)
		v = (v << 8) | b[off + i];
	return v;
}

// The fixed widths as one load and a byte swap: every READ and WRITE
// decodes its LBA and length with them (a byte loop was ~40 instructions
// per command).
template <typename T>
inline T load_be(std::span<const uint8_t> b, std::size_t off)
{
	T v;
	std::memcpy(&v, b.data() + off, sizeof(v));
	if constexpr (std::endian::native == std::endian::little) {
		if constexpr (sizeof(T) == 2)
			v = __builtin_bswap16(v);
		else if constexpr (sizeof(T) == 4)
			v = __builtin_bswap32(v);
		else
			v = __builtin_bswap64(v);
	}
	return v;
}

inline uint16_t get_be16(std::span<const uint8_t> b, std::size_t off)
{
	return load_be<uint16_t>(b, off);
}

inline uint32_t get_be32(std::span<const uint8_t> b, std::size_t off)
{
	return load_be<uint32_t>(b, off);
}

inline uint64_t get_be64(std::span<const uint8_t> b, std::size_t off)
{
	return load_be<uint64_t>(b, off);
}

inline void put_be(std::span<uint8_t> b, std::size_t off, std::size_t n, uint64_t v)
{
	for (std::size_t i = n; i > 0; i--) {
		b[off + i - 1] = static_cast<uint8_t>(v & 0xff);
		v >>= 8;
	}
}

inline void put_be16(std::span<uint8_t> b, std::size_t off, uint64_t v) { put_be(b, off, 2, v); }
inline void put_be32(std::span<uint8_t> b, std::size_t off, uint64_t v) { put_be(b, off, 4, v); }
inline void put_be64(std::span<uint8_t> b, std::size_t off, uint64_t v) { put_be(b, off, 8, v); }

} // namespace tcmud::scsi
