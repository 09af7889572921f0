// SPDX-License-Identifier: GPL-2.0-or-later
// The fuzz targets as ordinary unit tests (builds without -Dfuzz=true): runs
// every file of the directories given, seed corpus and minimised crashers
// alike, through the target once. An oracle that trips aborts, which fails
// the test; so does finding no input at all (a corpus lost in a move).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	namespace fs = std::filesystem;
	std::vector<fs::path> files;
	for (int i = 1; i < argc; i++) {
		fs::path p(argv[i]);
		if (fs::is_directory(p)) {
			for (const auto &e : fs::directory_iterator(p))
				if (e.is_regular_file() && e.path().filename().string()[0] != '.')
					files.push_back(e.path());
		} else if (fs::is_regular_file(p)) {
			files.push_back(p);
		} else {
			std::fprintf(stderr, "%s: no such file or directory\n", argv[i]);
			return 1;
		}
	}
	std::sort(files.begin(), files.end());
	if (files.empty()) {
		std::fprintf(stderr, "no inputs found\n");
		return 1;
	}
	for (const auto &f : files) {
		std::ifstream in(f, std::ios::binary);
		std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
					   std::istreambuf_iterator<char>());
		std::fprintf(stderr, "%s (%zu bytes)\n", f.c_str(), bytes.size());
		LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
	}
	std::printf("%zu inputs replayed, no oracle tripped\n", files.size());
	return 0;
}
