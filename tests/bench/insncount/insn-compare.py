#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""insn-compare.py OUT FUNC[,FUNC...] - named kernel functions per command, per row.

OUT is the out directory of a bench-insn boot made with --insn-profile.
For every row (back end or BENCH_INSN_KMODS variant) and workload of
OUT/bench-insn/intervals.tsv, prints a markdown table: the profile's kernel
instructions per command and, for each FUNC, the median over repetitions of
its instructions per command (a mark pair's cost, the null interval,
subtracted). FUNC matches a symbol with or without its " [module]".
Each row uses its own symbols (kallsyms-LABEL.txt when the scenario saved
one, as insn-profile.py does). Counts are the profile's: raw and
approximate (insn-profile.py's docstring says why).
"""
import collections
import importlib.util
import os
import statistics
import sys


def load_profile_module():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "insn-profile.py")
    spec = importlib.util.spec_from_file_location("insn_profile", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    out, funcs = sys.argv[1], sys.argv[2].split(",")
    ip = load_profile_module()
    symcache = {}
    res = collections.defaultdict(list)
    with open(os.path.join(out, "bench-insn", "intervals.tsv")) as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    for r in rows:
        label, workload, _rep, a, b, cmds = r[:6]
        if label == "null" or int(cmds) == 0:
            continue
        ksyms = ip.kallsyms_of(out, label)
        if ksyms not in symcache:
            syms = ip.load_syms(ksyms)
            symcache[ksyms] = (syms, [s[0] for s in syms])
        syms, addrs = symcache[ksyms]
        agg = ip.by_symbol(out, a, b, syms, addrs)
        if os.path.exists(os.path.join(out, "marks", "prof.null.r1.to")):
            agg.subtract(ip.by_symbol(out, "null.r1.from", "null.r1.to", syms, addrs))
        n = int(cmds)
        per = {fn: sum(v for k, v in agg.items() if k == fn or k.startswith(fn + " ")) / n
               for fn in funcs}
        per[None] = sum(v for v in agg.values() if v > 0) / n
        res[(label, workload)].append(per)
    print("| row | workload | kernel/cmd (profile) | " + " | ".join(funcs) + " |")
    print("|---|---|---|" + "---|" * len(funcs))
    for (label, workload), reps in res.items():
        def med(k):
            return statistics.median(x[k] for x in reps)
        print(f"| {label} | {workload} | {med(None):,.0f} | "
              + " | ".join(f"{med(fn):,.0f}" for fn in funcs) + " |")


if __name__ == "__main__":
    main()
