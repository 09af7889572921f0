#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""insn-profile.py OUT FROM_MARK TO_MARK [TOP] - the top kernel functions between two marks.

OUT is the out directory of a boot made with tests/vm/run --insn-profile
(scripts/bench.sh --insn does that): OUT/marks/prof.<mark> holds the
plugin's cumulative instruction count per kernel TB start address at that
mark ("<vaddr hex> <insns>"), OUT/kallsyms.txt the guest's /proc/kallsyms
(saved by the scenario once every module is loaded; for marks of the rows on
kmod/'s modules, tcmud-<N>q.*, OUT/kallsyms-patched.txt; for a
BENCH_INSN_KMODS variant LABEL.*, OUT/kallsyms-LABEL.txt; a -direct, -fixed
or -direct-fixed row uses its LABEL's). Prints the TOP (default
30) kernel symbols by instructions executed between the two marks, and per
command when OUT/bench-insn/intervals.tsv knows the interval's commands.
When the run has a "null" interval (two marks back to back: null.r1.from,
null.r1.to), its profile is subtracted per symbol, as bench-insn-report.py
subtracts a mark pair's cost from the totals (--keep-marks: do not).

The per-TB counters are inline adds shared between vCPUs, so they can lose
updates: the figures are approximate (the plugin's main counters are exact;
compare the "profile sum" line with bench-insn-report's kernel count).
Counts are raw: a rep-prefixed copy counts every iteration, and spin-wait
loops are in (the report's counts leave them out): such functions are
tagged "(spin-wait)"; their share depends on host scheduling.
Example: insn-profile.py build/vm-out/bench-insn tcmud.randread-4k.r1.from tcmud.randread-4k.r1.to
"""
import bisect
import collections
import os
import re
import sys


# kernel functions that are (mostly) PAUSE loops
SPIN = ("spin_lock_slowpath", "spin_on_owner", "osq_lock", "cpu_relax")


def load_prof(path):
    counts = {}
    for line in open(path):
        a, c = line.split()
        counts[int(a, 16)] = int(c)
    return counts


def load_syms(path):
    syms = []
    for line in open(path):
        f = line.split()
        if len(f) < 3 or f[1] not in "tTwW":
            continue
        syms.append((int(f[0], 16), f[2] + (" " + f[3] if len(f) > 3 else "")))
    syms.sort()
    return syms


def commands_of(out, a, b):
    path = os.path.join(out, "bench-insn", "intervals.tsv")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if f[3] == a and f[4] == b and int(f[5]):
                return int(f[5])
    return None


def by_symbol(out, a, b, syms, addrs):
    pa = load_prof(os.path.join(out, "marks", "prof." + a))
    pb = load_prof(os.path.join(out, "marks", "prof." + b))
    agg = collections.Counter()
    for va, c in pb.items():
        d = c - pa.get(va, 0)
        if d > 0:
            i = bisect.bisect_right(addrs, va) - 1
            agg[syms[i][1] if i >= 0 else hex(va)] += d
    return agg


def kallsyms_of(out, label):
    """The symbols a row's interval was counted under: a BENCH_INSN_KMODS
    variant's own (its modules moved again), kmod/'s for tcmud-<N>q, the
    stock ones otherwise; a LABEL-direct, LABEL-fixed, LABEL-zc or
    LABEL-direct-fixed-zc row (BENCH_INSN_TCMUD_DIRECT, BENCH_INSN_KMOD_FIXED,
    BENCH_INSN_KMOD_ZC) is served by the same modules as LABEL."""
    base = re.sub(r"(-direct)?(-fixed)?(-zc)?$", "", label)
    for name in (label, base if base != label else None):
        if name is None:
            continue
        variant = os.path.join(out, "kallsyms-%s.txt" % name)
        if os.path.exists(variant):
            return variant
        patched = os.path.join(out, "kallsyms-patched.txt")
        if re.fullmatch(r"tcmud-[0-9]+q", name) and os.path.exists(patched):
            return patched
    return os.path.join(out, "kallsyms.txt")


def main():
    args = [a for a in sys.argv[1:] if a != "--keep-marks"]
    if len(args) < 3:
        print(__doc__)
        sys.exit(2)
    out, a, b = args[:3]
    top = int(args[3]) if len(args) > 3 else 30
    ksyms = kallsyms_of(out, a.split(".")[0])
    syms = load_syms(ksyms)
    if not syms:
        sys.exit(f"insn-profile: no text symbols in {ksyms} (kptr_restrict?)")
    addrs = [s[0] for s in syms]
    agg = by_symbol(out, a, b, syms, addrs)
    note = ""
    if "--keep-marks" not in sys.argv and os.path.exists(os.path.join(out, "marks", "prof.null.r1.to")):
        agg.subtract(by_symbol(out, "null.r1.from", "null.r1.to", syms, addrs))
        agg = collections.Counter({k: v for k, v in agg.items() if v > 0})
        note = " less the null interval's (a mark pair's cost)"
    total = sum(agg.values())
    cmds = commands_of(out, a, b)
    print(f"kernel instructions {a} -> {b} (profile sum{note}): {total:,}"
          + (f", {cmds:,} commands: {total / cmds:,.0f} per command" if cmds else ""))
    for name, c in agg.most_common(top):
        per = f" {c / cmds:>10,.0f}/cmd" if cmds else ""
        spin = "  (spin-wait)" if any(s in name for s in SPIN) else ""
        print(f"{c:>15,} {c / total:6.1%}{per}  {name}{spin}")


if __name__ == "__main__":
    main()
