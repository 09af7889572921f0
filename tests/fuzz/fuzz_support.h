// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// What every fuzz target shares: a reader that turns the fuzzer's bytes into
// decisions (running out of bytes reads zeroes, so every input is a complete
// script), and the oracle check that stops the run with a message.
//
// An oracle that trips aborts: libFuzzer saves the input as a crash, the
// replay unit test (replay_main.cpp) fails on it. An oracle guarding a defect
// known to be open (issue 14's F1..F7) names it, and TCMUD_FUZZ_WAIVE="F1,F4"
// turns that one into a note on stderr, so a campaign can look past a defect
// someone is fixing without losing the oracle.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tcmud::fuzz {

class input {
public:
	input(const uint8_t *data, size_t size) : p_(data), n_(size) {}

	bool empty() const { return n_ == 0; }
	size_t left() const { return n_; }
	uint8_t u8();
	uint16_t u16();
	uint32_t u32();
	uint64_t u64();
	bool flag() { return u8() & 1; }
	// A value in [lo, hi] (hi >= lo).
	uint64_t range(uint64_t lo, uint64_t hi);
	// Up to n bytes (fewer once the input ends).
	std::span<const uint8_t> bytes(size_t n);
	std::span<const uint8_t> rest() { return bytes(n_); }

private:
	const uint8_t *p_;
	size_t n_;
};

// out[i] = uint8_t(start + i), by memcpy from a table: a byte loop in a
// target costs a coverage callback per byte (-fsanitize-coverage=trace-cmp),
// which made the data patterns most of an execution's time.
void fill_ramp(std::span<uint8_t> out, uint8_t start);

// FUZZ_ORACLE_LOOP: on a harness function whose loops walk every piece of
// a buffer (up to IOV_MAX per SQE): no coverage callbacks in it. They are
// not tcmud's code, so their features guide nothing, and in the backstore
// target they were about half of each execution's time.
// FUZZ_ORACLE_HELPER: the same for a small function such oracles call per
// byte. Without it clang will not inline it into them (the two differ in
// no_sanitize), so each call is a call plus its own coverage callbacks.
#if defined(__clang__)
#define FUZZ_ORACLE_LOOP __attribute__((no_sanitize("coverage"), noinline))
#define FUZZ_ORACLE_HELPER __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_ORACLE_LOOP // gcc builds replay the corpus only: no coverage
#define FUZZ_ORACLE_HELPER
#endif

[[noreturn]] void fail(const char *file, int line, const char *expr, const std::string &what);
// True (after one note on stderr) when the defect is waived for this run.
bool waived(std::string_view defect, const char *file, int line, const std::string &what);

} // namespace tcmud::fuzz

// FUZZ_CHECK(cond, message): an oracle.
#define FUZZ_CHECK(cond, what)                                                       \
	do {                                                                          \
		if (!(cond))                                                          \
			::tcmud::fuzz::fail(__FILE__, __LINE__, #cond, (what));       \
	} while (0)

// FUZZ_CHECK_KNOWN("F1", cond, message): an oracle for an open defect.
#define FUZZ_CHECK_KNOWN(defect, cond, what)                                         \
	do {                                                                          \
		if (!(cond) && !::tcmud::fuzz::waived(defect, __FILE__, __LINE__, (what))) \
			::tcmud::fuzz::fail(__FILE__, __LINE__, #cond,                 \
					    std::string(defect) + ": " + (what));      \
	} while (0)
