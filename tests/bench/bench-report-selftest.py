#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The paired runs of scripts/bench-report.py (bench.sh --pairs) on a
synthetic bench directory whose answers are known: the rows read back, the
pairs kept out of the main tables' labels, each pair's ratio and order, the
median and range. Exits non-zero on any mismatch.
    bench-report-selftest.py SOURCE_ROOT"""
import importlib.util
import json
import os
import sys
import tempfile

spec = importlib.util.spec_from_file_location(
    "report", os.path.join(sys.argv[1], "scripts", "bench-report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

failures = 0


def check(what, got, want):
    global failures
    if got != want:
        print(f"FAIL {what}: got {got!r}, want {want!r}")
        failures += 1


def fio_json(iops):
    side = dict(iops=iops, bw_bytes=iops * 4096, total_ios=iops * 5, lat_ns=dict(mean=1000.0))
    return json.dumps(dict(jobs=[dict(read=side, write=dict(total_ios=0))]))


# (label, workload, jobs, IOPS); pairs 1-3 at 4k 2 jobs with ratios 0.9, 0.8,
# 0.95, and one 128k pair whose tcmud run is missing (no ratio).
runs = [("fileio", "randread-4k", 2, 2500), ("tcmud-1q", "randread-4k", 2, 2200),
        ("pair1-fileio", "randread-4k", 2, 2000), ("pair1-tcmud-1q", "randread-4k", 2, 1800),
        ("pair2-fileio", "randread-4k", 2, 2500), ("pair2-tcmud-1q", "randread-4k", 2, 2000),
        ("pair3-fileio", "randread-4k", 2, 2000), ("pair3-tcmud-1q", "randread-4k", 2, 1900),
        ("pair1-fileio", "randread-128k", 2, 900)]
with tempfile.TemporaryDirectory() as bench:
    with open(os.path.join(bench, "counters.tsv"), "w") as f:
        for label, workload, jobs, iops in runs:
            f.write(f"{label}\t{workload}\t{jobs}\t{iops * 5}\t-\t-\t-\t10.0\n")
            with open(os.path.join(bench, f"{label}-{workload}-j{jobs}.json"), "w") as j:
                j.write(fio_json(iops))
    rows = report.read_rows(bench, 100, 16)

check("rows read", len(rows), len(runs))
check("pair label", report.pair_of("pair12-tcmud-1q"), (12, "tcmud-1q"))
check("plain label", report.pair_of("tcmud-1q"), (None, "tcmud-1q"))
check("not a pair", report.pair_of("pairs-fileio"), (None, "pairs-fileio"))
check("pair row described as its base", report.describe("pair2-tcmud-1q"), ("tcmud", "patched", 1))
pairs = report.paired(rows)
check("groups (the 128k pair has no tcmud run)", [(g["workload"], g["jobs"]) for g in pairs],
      [("randread-4k", 2)])
g = pairs[0]
check("ratios", [p["ratio"] for p in g["pairs"]], [0.9, 0.8, 0.95])
check("order swapped every pair", [p["first"] for p in g["pairs"]], ["fileio", "tcmud-1q", "fileio"])
check("median ratio", g["ratio_median"], 0.9)
check("range", (g["ratio_min"], g["ratio_max"]), (0.8, 0.95))
check("median IOPS", (g["fileio_iops_median"], g["tcmud_iops_median"]), (2000, 1900))
md = "\n".join(report.paired_markdown(dict(pairs=pairs, meta={"kmod_fixed": "1"})))
check("summary line", "| randread-4k | 2 | 3 | 2,000 | 1,900 | **0.900** | 0.800-0.950 |" in md, True)
check("no section without pairs", report.paired_markdown(dict(pairs=[], meta={})), [])
sys.exit(1 if failures else 0)
