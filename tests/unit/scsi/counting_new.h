// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The global operator new of the program that links counting_new.cpp
// counts its calls while `counting` is set. Its own file: a replacement
// visible where it is used trips g++'s -Wmismatched-new-delete.
#include <atomic>
#include <cstdint>

namespace tcmud::test {

extern std::atomic<bool> counting;
extern std::atomic<uint64_t> allocations;

} // namespace tcmud::test
