// SPDX-License-Identifier: GPL-2.0-or-later
#include "config/queue_placement.h"

#include <bitset>

namespace tcmud {
namespace {

// A CPU number: digits only, at most max_cpu_number. -1 if not.
int parse_cpu(std::string_view s)
{
	if (s.empty() || s.size() > 4)
		return -1;
	int v = 0;
	for (char c : s) {
		if (c < '0' || c > '9')
			return -1;
		v = v * 10 + (c - '0');
	}
	return v <= max_cpu_number ? v : -1;
}

using cpu_set = std::bitset<max_cpu_number + 1>;

// One "N" or "N-M" item of a list, appended to *cpus; *seen has every CPU
// listed so far (a search of *cpus per CPU made "0-1023" quadratic).
setup_result<void> parse_item(std::string_view item, std::vector<int> *cpus, cpu_set *seen)
{
	size_t dash = item.find('-');
	int lo = parse_cpu(item.substr(0, dash));
	int hi = dash == std::string_view::npos ? lo : parse_cpu(item.substr(dash + 1));
	if (lo < 0 || hi < 0)
		return setup_error{EINVAL, "\"" + std::string(item) +
						   "\" is not a CPU number from 0 to " +
						   std::to_string(max_cpu_number) +
						   " or a range N-M of them"};
	if (hi < lo)
		return setup_error{EINVAL,
				   "the range \"" + std::string(item) + "\" runs backwards"};
	for (int c = lo; c <= hi; ++c) {
		if (seen->test(size_t(c)))
			return setup_error{EINVAL, "CPU " + std::to_string(c) + " is listed twice"};
		seen->set(size_t(c));
		cpus->push_back(c);
	}
	return {};
}

} // namespace

setup_result<queue_placement> parse_queue_placement(std::string_view text)
{
	if (text == "auto")
		return queue_placement{queue_placement::mode::automatic, {}};
	if (text == "none")
		return queue_placement{queue_placement::mode::none, {}};
	queue_placement p{queue_placement::mode::list, {}};
	cpu_set seen;
	while (true) {
		size_t comma = text.find(',');
		if (auto item = parse_item(text.substr(0, comma), &p.cpus, &seen); !item)
			return item.error();
		if (comma == std::string_view::npos)
			break;
		text = text.substr(comma + 1);
	}
	return p;
}

int queue_cpu(const queue_placement &p, unsigned q, unsigned nr_queues, unsigned online_cpus)
{
	switch (p.how) {
	case queue_placement::mode::automatic:
		if (nr_queues < 2 || online_cpus == 0)
			return -1;
		return int(q % online_cpus);
	case queue_placement::mode::list:
		if (p.cpus.empty())
			return -1;
		return p.cpus[q % p.cpus.size()];
	case queue_placement::mode::none:
		break;
	}
	return -1;
}

std::string to_string(const queue_placement &p)
{
	if (p.how == queue_placement::mode::automatic)
		return "auto";
	if (p.how == queue_placement::mode::none)
		return "none";
	std::string s;
	for (size_t i = 0; i < p.cpus.size();) {
		size_t j = i;
		while (j + 1 < p.cpus.size() && p.cpus[j + 1] == p.cpus[j] + 1)
			++j;
		if (!s.empty())
			s += ',';
		s += std::to_string(p.cpus[i]);
		if (j > i)
			s += '-' + std::to_string(p.cpus[j]);
		i = j + 1;
	}
	return s;
}

} // namespace tcmud
