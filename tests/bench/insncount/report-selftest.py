#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The arithmetic of scripts/bench-insn-report.py on a synthetic run whose
answers are known: arch = instructions - spin - rep, raw = instructions -
spin, the median null interval (a mark pair's cost) subtracted, per command
and per I/O, the median over repetitions. Exits non-zero on any mismatch.
    report-selftest.py SOURCE_ROOT"""
import importlib.util
import os
import sys
import tempfile

spec = importlib.util.spec_from_file_location(
    "report", os.path.join(sys.argv[1], "scripts", "bench-insn-report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def line(name, user, kern, user_rep=0, kern_rep=0, user_spin=0, kern_spin=0):
    # name user kernel host_ns user_rep kernel_rep user_tbs kernel_tbs idle_entries idle_ns
    # user_spin kernel_spin user_pauses kernel_pauses
    return f"{name} {user} {kern} 0 {user_rep} {kern_rep} 0 0 0 0 {user_spin} {kern_spin} 0 0\n"


with tempfile.TemporaryDirectory() as out:
    os.makedirs(os.path.join(out, "marks"))
    os.makedirs(os.path.join(out, "bench-insn"))
    with open(os.path.join(out, "marks", "counts-ext.txt"), "w") as f:
        f.write("# header\n")
        # null intervals: 100 user, 1,000 kernel (+ spin 500 that must not count); median of 3
        f.write(line("n1.a", 0, 0) + line("n1.b", 100, 1500, 0, 0, 0, 500))
        f.write(line("n2.a", 0, 0) + line("n2.b", 100, 1000))
        f.write(line("n3.a", 0, 0) + line("n3.b", 900, 9000))
        # x 2 reps of 10 I/Os, 20 commands: user 1,100, kernel 21,000 with 5,000 rep and 3,000 spin
        f.write(line("x1.a", 10, 10) + line("x1.b", 1110, 24010, 0, 5000, 0, 3000))
        f.write(line("x2.a", 0, 0) + line("x2.b", 1100, 21000, 0, 5000, 0, 0))
        # y (BENCH_INSN_LONG_X=3): 50 user and 500 kernel per command plus
        # 10,000 kernel a run, over the null's 100 + 1,000; 20 commands,
        # then 60, twice
        for rep, cmds in ((1, 20), (2, 60), (3, 20), (4, 60)):
            f.write(line(f"y{rep}.a", 0, 0) + line(f"y{rep}.b", 100 + 50 * cmds, 11000 + 500 * cmds))
    with open(os.path.join(out, "bench-insn", "intervals.tsv"), "w") as f:
        for n in (1, 2, 3):
            f.write(f"null\t-\t{n}\tn{n}.a\tn{n}.b\t0\t0\t1\n")
        f.write("x\tw\t1\tx1.a\tx1.b\t20\t10\t4\n")
        f.write("x\tw\t2\tx2.a\tx2.b\t20\t10\t6\n")
        for rep, cmds in ((1, 20), (2, 60), (3, 20), (4, 60)):
            f.write(f"y\tw\t{rep}\ty{rep}.a\ty{rep}.b\t{cmds}\t{cmds}\t0\n")
    with open(os.path.join(out, "bench-insn", "meta.env"), "w") as f:
        f.write("reps=2\n")
    meta, null, rows, _threads = report.analyse(out)

want = {"user_arch": 50, "kernel_arch": 750, "total_arch": 800, "kernel_raw": 1000, "total_raw": 1050,
        "kernel_rep": 250, "ticks": 0.25}
got = rows[0]["per_cmd"]
bad = {k: (got[k], v) for k, v in want.items() if got[k] != v}
if null["kernel_raw"] != 1000 or null["user_raw"] != 100:
    bad["null"] = (null, "user_raw 100, kernel_raw 1000")
if rows[0]["commands_per_io"] != 2.0 or rows[0]["per_io"]["total_arch"] != 1600:
    bad["per_io"] = (rows[0]["commands_per_io"], rows[0]["per_io"]["total_arch"])
# y: the table over the short runs only (500 + 10,000 / 20 kernel, 50 user
# a command), the marginal cost and the intercept from the pairs; x has
# no pairs.
y = rows[1]
if y["per_cmd"]["total_arch"] != 1050 or y["spread_pct"] != 0:
    bad["short reps"] = (y["per_cmd"]["total_arch"], y["spread_pct"], "1050, 0")
want_m = {"user_arch": 50, "kernel_arch": 500, "total_arch": 550, "total_raw": 550,
          "total_arch_fixed": 10000, "pairs": 2}
if not y["marginal"] or any(y["marginal"][k] != v for k, v in want_m.items()) or rows[0]["marginal"]:
    bad["marginal"] = (y["marginal"], rows[0]["marginal"], want_m)
# rbd bench's marginal op: start-up 1,000 plus 100 per op, 10 ops then 20;
# the daemon row at 250 per I/O is 0.4 of the ceiling's 100.
def bench_row(label, ios, total):
    per_io = {"total_arch": total / ios, "total_raw": 2 * total / ios}
    return {"label": label, "workload": "w", "per_io": per_io,
            "reps": [{"rep": 1, "ios": ios, "per_io": per_io}]}


m = report.rbd_bench_marginal([bench_row("rbd-bench-1x", 10, 2000), bench_row("rbd-bench-2x", 20, 3000),
                               bench_row("tcmud-rbd", 10, 2500)])
if not m or m["workloads"]["w"]["arch"] != 100 or m["workloads"]["w"]["raw"] != 200 \
        or m["workloads"]["w"]["daemons"] != {"tcmud-rbd": 250} or m["labels"] != ["tcmud-rbd"]:
    bad["rbd_bench_marginal"] = (m, "arch 100, raw 200, tcmud-rbd 250")
if bad:
    print("bench-insn-report: wrong (got, want):", bad)
    sys.exit(1)
print("bench-insn-report arithmetic: ok", got)
