// SPDX-License-Identifier: GPL-2.0-or-later
// Replaces every form of the global operator new and delete (see
// counting_new.h); memory comes from malloc/posix_memalign.
#include "counting_new.h"

#include <cstddef>
#include <cstdlib>
#include <new>

namespace tcmud::test {

std::atomic<bool> counting{false};
std::atomic<uint64_t> allocations{0};

} // namespace tcmud::test

namespace {

void *counted_alloc(std::size_t size, std::size_t alignment)
{
	using namespace tcmud::test;
	if (counting.load(std::memory_order_relaxed))
		allocations.fetch_add(1, std::memory_order_relaxed);
	void *p = nullptr;
	if (alignment <= alignof(std::max_align_t))
		p = std::malloc(size ? size : 1);
	else if (posix_memalign(&p, alignment, size ? size : 1) != 0)
		p = nullptr;
	return p;
}

void *counted_alloc_or_throw(std::size_t size, std::size_t alignment)
{
	if (void *p = counted_alloc(size, alignment))
		return p;
	throw std::bad_alloc();
}

} // namespace

void *operator new(std::size_t size) { return counted_alloc_or_throw(size, 0); }
void *operator new[](std::size_t size) { return counted_alloc_or_throw(size, 0); }
void *operator new(std::size_t size, std::align_val_t a)
{
	return counted_alloc_or_throw(size, static_cast<std::size_t>(a));
}
void *operator new[](std::size_t size, std::align_val_t a)
{
	return counted_alloc_or_throw(size, static_cast<std::size_t>(a));
}
void *operator new(std::size_t size, const std::nothrow_t &) noexcept
{
	return counted_alloc(size, 0);
}
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept
{
	return counted_alloc(size, 0);
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
