// SPDX-License-Identifier: GPL-2.0-or-later
#include "stats/latency_histogram.h"

#include <cmath>

namespace tcmud::stats {

uint64_t latency_quantile(std::span<const uint64_t, latency_buckets> counts, double q)
{
	uint64_t total = 0;
	for (uint64_t c : counts)
		total += c;
	if (total == 0)
		return 0;
	q = q <= 0 ? 0 : (q > 1 ? 1 : q);
	// The rank of the wanted value, 1-based: p99 of 1000 values is the
	// 990th. At least 1, so q = 0 gives the minimum.
	// The small slack keeps 0.99 * 100 (99.00000000000001 in binary
	// floating point) at rank 99.
	double exact = q * double(total);
	auto rank = uint64_t(std::ceil(exact - exact * 1e-12));
	if (rank == 0)
		rank = 1;
	if (rank > total)
		rank = total;
	uint64_t seen = 0;
	for (size_t i = 0; i < latency_buckets; ++i) {
		seen += counts[i];
		if (seen >= rank)
			return latency_bucket_high(i);
	}
	return latency_bucket_high(latency_buckets - 1);
}

} // namespace tcmud::stats
