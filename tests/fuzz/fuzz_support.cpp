// SPDX-License-Identifier: GPL-2.0-or-later
#include "fuzz_support.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace tcmud::fuzz {

uint8_t input::u8()
{
	if (n_ == 0)
		return 0;
	n_--;
	return *p_++;
}

uint16_t input::u16()
{
	return uint16_t(u8() | u8() << 8);
}

uint32_t input::u32()
{
	return uint32_t(u16()) | uint32_t(u16()) << 16;
}

uint64_t input::u64()
{
	return uint64_t(u32()) | uint64_t(u32()) << 32;
}

uint64_t input::range(uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo;
	uint64_t v = span < 0x100 ? u8() : span < 0x10000 ? u16() : span < 0x100000000 ? u32() : u64();
	return span == UINT64_MAX ? v : lo + v % (span + 1);
}

std::span<const uint8_t> input::bytes(size_t n)
{
	n = std::min(n, n_);
	std::span<const uint8_t> out(p_, n);
	p_ += n;
	n_ -= n;
	return out;
}

void fill_ramp(std::span<uint8_t> out, uint8_t start)
{
	constexpr size_t chunk = 4096;
	static const auto table = [] {
		std::array<uint8_t, chunk + 256> t{};
		for (size_t i = 0; i < t.size(); i++)
			t[i] = uint8_t(i);
		return t;
	}();
	// chunk is a multiple of 256: every chunk starts on the same byte.
	for (size_t at = 0; at < out.size(); at += chunk)
		std::memcpy(out.data() + at, table.data() + start,
			    std::min(chunk, out.size() - at));
}

void fail(const char *file, int line, const char *expr, const std::string &what)
{
	std::fprintf(stderr, "ORACLE FAILED at %s:%d: %s\n  (%s)\n", file, line, what.c_str(), expr);
	std::fflush(stderr);
	std::abort();
}

bool waived(std::string_view defect, const char *file, int line, const std::string &what)
{
	const char *list = std::getenv("TCMUD_FUZZ_WAIVE");
	if (!list)
		return false;
	std::string_view l(list);
	bool found = false;
	for (size_t at = 0; at <= l.size();) {
		size_t end = l.find(',', at);
		if (end == std::string_view::npos)
			end = l.size();
		if (l.substr(at, end - at) == defect)
			found = true;
		at = end + 1;
	}
	if (!found)
		return false;
	static std::set<std::string> noted;
	if (noted.insert(std::string(defect)).second)
		std::fprintf(stderr, "waived %.*s at %s:%d: %s\n", int(defect.size()), defect.data(),
			     file, line, what.c_str());
	return true;
}

} // namespace tcmud::fuzz
