#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Tabulates one counted boot of tests/vm/scenarios/bench-insn.sh (scripts/bench.sh --insn).

Reads the VM's out directory: marks/counts-ext.txt (the insncount plugin's
snapshot at every mark), bench-insn/intervals.tsv (which marks bound which
fio run, and the commands and I/Os in it) and bench-insn/meta.env. Writes
STEM.json (one row per back end and workload, with every repetition),
STEM.md (the table) and STEM.png (gnuplot), and prints the markdown.

Per interval and mode (user, kernel): raw = instructions - spin-wait
instructions; arch = raw - rep iterations (a rep-prefixed string
instruction counts once, as a hardware counter would). The median "null"
interval (two marks back to back) is subtracted from each: that is what the
two marks themselves cost. Rows give the median over repetitions.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import tempfile

FIELDS = ("user", "kernel", "user_rep", "kernel_rep", "user_spin", "kernel_spin")


def read_marks(path):
    """counts-ext.txt -> {mark: {field: value}}"""
    marks = {}
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.split()
        # name user kernel host_ns user_rep kernel_rep user_tbs kernel_tbs
        # idle_entries idle_ns user_spin kernel_spin user_pauses kernel_pauses
        v = [int(x) for x in f[1:]]
        marks[f[0]] = dict(user=v[0], kernel=v[1], host_ns=v[2], user_rep=v[3], kernel_rep=v[4],
                           idle_ns=v[8], user_spin=v[9], kernel_spin=v[10])
    return marks


def interval(marks, a, b):
    d = {k: marks[b][k] - marks[a][k] for k in FIELDS}
    d["host_s"] = (marks[b]["host_ns"] - marks[a]["host_ns"]) / 1e9
    d["idle_s"] = (marks[b]["idle_ns"] - marks[a]["idle_ns"]) / 1e9
    return d


def derived(d):
    """raw and arch per mode from an interval's deltas."""
    out = {}
    for m in ("user", "kernel"):
        out[m + "_raw"] = d[m] - d[m + "_spin"]
        out[m + "_arch"] = out[m + "_raw"] - d[m + "_rep"]
        out[m + "_rep"] = d[m + "_rep"]
        out[m + "_spin"] = d[m + "_spin"]
    out["total_raw"] = out["user_raw"] + out["kernel_raw"]
    out["total_arch"] = out["user_arch"] + out["kernel_arch"]
    out["spin"] = out["user_spin"] + out["kernel_spin"]
    return out


def analyse(vmout):
    bench = os.path.join(vmout, "bench-insn")
    marks = read_marks(os.path.join(vmout, "marks", "counts-ext.txt"))
    meta = dict(line.strip().split("=", 1) for line in open(os.path.join(bench, "meta.env")) if "=" in line)
    runs, nulls = [], []
    for line in open(os.path.join(bench, "intervals.tsv")):
        f = line.split()
        label, workload, rep, a, b, cmds, ios = f[:7]
        if a not in marks or b not in marks:
            continue
        iv = interval(marks, a, b)
        d = derived(iv)
        d["ticks"] = int(f[7]) if len(f) > 7 else 0
        # Time: what the host's load decides (IOPS under the plugin, and
        # how fast the guest ran), beside the counts that it does not.
        cpus = int(meta.get("guest_cpus") or 1)
        time = dict(iops=int(ios) / iv["host_s"] if iv["host_s"] else 0,
                    minsn_s=(iv["user"] + iv["kernel"]) / iv["host_s"] / 1e6 if iv["host_s"] else 0,
                    idle_pct=100 * iv["idle_s"] / (cpus * iv["host_s"]) if iv["host_s"] else 0)
        if label == "null":
            nulls.append(d)
        else:
            runs.append(dict(label=label, workload=workload, rep=int(rep), commands=int(cmds), ios=int(ios),
                             counts=d, time=time))
    keys = list(derived({k: 0 for k in FIELDS}).keys()) + ["ticks"]
    null = {k: round(statistics.median(n[k] for n in nulls)) if nulls else 0 for k in keys}
    rows = []
    for label in dict.fromkeys(r["label"] for r in runs):
        for workload in dict.fromkeys(r["workload"] for r in runs if r["label"] == label):
            reps = [r for r in runs if r["label"] == label and r["workload"] == workload]
            per_rep = []
            for r in reps:
                c = {k: r["counts"][k] - null[k] for k in keys}
                c["ticks"] = r["counts"]["ticks"]  # the marks' own ticks are not in it
                per_rep.append(dict(rep=r["rep"], commands=r["commands"], ios=r["ios"],
                                    per_cmd={k: c[k] / r["commands"] for k in keys} if r["commands"] else None,
                                    per_io={k: c[k] / r["ios"] for k in keys}))
            for p, r in zip(per_rep, reps):
                p["time"] = {k: round(v, 1) for k, v in r["time"].items()}
            # With BENCH_INSN_LONG_X the even repetitions are longer: the
            # table's medians stay over the short ones, and the pairs give
            # the marginal cost (below).
            short = min(p["ios"] for p in per_rep)
            ok = [p for p in per_rep if p["per_cmd"] and p["ios"] == short]
            row = dict(label=label, workload=workload, reps=per_rep,
                       commands_per_io=round(statistics.median(p["commands"] / p["ios"] for p in per_rep), 3))
            for unit in ("per_cmd", "per_io"):
                row[unit] = {k: round(statistics.median(p[unit][k] for p in ok), 3 if k == "ticks" else None)
                             for k in keys} if ok else None
            # the spread of the total between repetitions, in % of the median
            tot = [p["per_io"]["total_arch"] for p in ok]
            row["spread_pct"] = round(100 * (max(tot) - min(tot)) / statistics.median(tot), 2) if tot else None
            row["marginal"] = marginal(per_rep)
            rows.append(row)
    return meta, null, rows, threads(bench)


MARGINAL_KEYS = ("user_arch", "kernel_arch", "total_arch", "total_raw")


def slope(a, b, unit, count, k):
    """Two repetitions, b the longer -> the cost of one more of COUNT
    (commands, ios), (b - a) / b's extra, and a's intercept: what the run
    costs besides them. UNIT is the per-COUNT dict the key is read from."""
    ta, tb = a[unit][k] * a[count], b[unit][k] * b[count]
    s = (tb - ta) / (b[count] - a[count])
    return s, ta - s * a[count]


def marginal(per_rep):
    """Short/long repetition pairs (BENCH_INSN_LONG_X) -> the marginal cost
    of one command, (long - short) / (its extra commands), and what a run
    costs besides its commands (fio's start-up and exit, the daemon's first
    wake-up), the intercept; medians over the pairs. None without pairs."""
    pairs = []
    for a, b in zip(per_rep, per_rep[1:]):
        if a["per_cmd"] and b["per_cmd"] and b["commands"] > a["commands"] and b["ios"] > a["ios"]:
            pairs.append((a, b))
    if not pairs:
        return None
    out = {}
    for k in MARGINAL_KEYS:
        slopes, fixed = zip(*(slope(a, b, "per_cmd", "commands", k) for a, b in pairs))
        out[k] = round(statistics.median(slopes))
        out[k + "_fixed"] = round(statistics.median(fixed))
    out["pairs"] = len(pairs)
    return out


# A thread of the daemon's own (tcmud's threads are unnamed: they carry
# the process name, tcmud-before for a "before" binary), as against
# librados'/librbd's, which Ceph names.
def own_thread(name):
    return name.startswith("tcmud") or name.startswith("tcmu-") or name.startswith("cmdproc")


def threads(bench):
    """threads.tsv (label workload rep name threads ticks) -> per label and
    workload: the median over repetitions of ticks per 1,000 commands, own
    threads and Ceph's, and the busiest thread names."""
    path = os.path.join(bench, "threads.tsv")
    if not os.path.exists(path):
        return []
    cmds = {}
    for line in open(os.path.join(bench, "intervals.tsv")):
        f = line.split()
        cmds[(f[0], f[1], f[2])] = int(f[5])
    per, sys_calls = {}, {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        label, workload, rep, name, ticks = f[0], f[1], f[2], f[3], int(f[5])
        d = per.setdefault((label, workload), {}).setdefault(rep, {})
        d[name] = d.get(name, 0) + ticks
        # read(2)/write(2) system calls (later runs only), own and Ceph's
        if len(f) >= 8:
            sc = sys_calls.setdefault((label, workload), {}).setdefault(rep, [0, 0, 0, 0])
            o = 0 if own_thread(name) else 2
            sc[o] += int(f[6])
            sc[o + 1] += int(f[7])
    out = []
    for (label, workload), reps in per.items():
        own, ceph, names = [], [], {}
        for rep, d in reps.items():
            n = cmds.get((label, workload, rep))
            if not n:
                continue
            own.append(1000 * sum(t for k, t in d.items() if own_thread(k)) / n)
            ceph.append(1000 * sum(t for k, t in d.items() if not own_thread(k)) / n)
            for k, t in d.items():
                names[k] = names.get(k, 0) + 1000 * t / n / len(reps)
        if not own:
            continue
        o, c = statistics.median(own), statistics.median(ceph)
        top = sorted(names.items(), key=lambda kv: -kv[1])[:5]
        row = dict(label=label, workload=workload, own=round(o, 1), ceph=round(c, 1),
                   own_pct=round(100 * o / (o + c), 1) if o + c else None,
                   top=[(k, round(v, 1)) for k, v in top])
        sc = sys_calls.get((label, workload))
        if sc:
            # per command, median over repetitions: own reads, own writes,
            # Ceph's reads, Ceph's writes
            row["syscalls"] = [round(statistics.median(v[i] / cmds[(label, workload, rep)]
                                                       for rep, v in sc.items()
                                                       if cmds.get((label, workload, rep))), 2)
                               for i in range(4)]
        out.append(row)
    return out


def rounds(bench):
    """rounds.tsv (label workload rep doorbells commands queues) -> per label
    and workload: the median over repetitions of tcmud's commands per
    completion batch (doorbell write) and of the queues the commands used."""
    path = os.path.join(bench, "rounds.tsv")
    if not os.path.exists(path):
        return []
    per = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 6 or not int(f[3]):
            continue
        per.setdefault((f[0], f[1]), []).append((int(f[4]) / int(f[3]), int(f[5]), int(f[4])))
    return [dict(label=label, workload=workload,
                 cmds_per_doorbell=round(statistics.median(v[0] for v in r), 2),
                 queues_used=int(statistics.median(v[1] for v in r)),
                 commands=int(statistics.median(v[2] for v in r)))
            for (label, workload), r in per.items()]


def rbd_bench_marginal(rows):
    """rbd-bench-1x/-2x rows -> per workload the marginal instructions of
    one rbd bench op (arch, raw), median over repetitions, and the rbd
    daemons' instructions per I/O beside it; None without those rows."""
    by = {(r["label"], r["workload"]): r for r in rows}
    labels = [r["label"] for r in rows if "rbd" in r["label"] and not r["label"].startswith("rbd-bench")]
    labels = list(dict.fromkeys(labels))
    out = {}
    for (label, w), one in by.items():
        two = by.get(("rbd-bench-2x", w))
        if label != "rbd-bench-1x" or not two:
            continue
        reps2 = {p["rep"]: p for p in two["reps"]}
        arch, raw = [], []
        for p in one["reps"]:
            q = reps2.get(p["rep"])
            if not q or q["ios"] == p["ios"]:
                continue
            arch.append(slope(p, q, "per_io", "ios", "total_arch")[0])
            raw.append(slope(p, q, "per_io", "ios", "total_raw")[0])
        if not arch:
            continue
        daemons = {lb: by[(lb, w)]["per_io"]["total_arch"] for lb in labels
                   if (lb, w) in by and by[(lb, w)]["per_io"]}
        out[w] = dict(arch=round(statistics.median(arch)), raw=round(statistics.median(raw)), daemons=daemons)
    return dict(labels=labels, workloads=out) if out else None


def fmt(v):
    return "–" if v is None else f"{v:,}"


def markdown(doc):
    rows, meta = doc["rows"], doc["meta"]
    base = {r["workload"]: r for r in rows if r["label"] == "fileio"}
    rbd_base = {r["workload"]: r for r in rows if r["label"] == "tcmu-runner-rbd"}
    out = [f"# Instructions per command {doc['date']}", "",
           f"`{doc['command']}` — tcmud {doc['tcmud_commit']}, bench scripts {doc['bench_scripts_commit']}, "
           f"guest kernel {meta.get('kernel')}, {meta.get('guest_cpus')} vCPUs under TCG with the insncount "
           f"plugin, {meta.get('fio')}, tcmu-runner {meta.get('tcmu_runner')}; fio libaio direct "
           f"{meta.get('workloads', 'randread-4k randread-128k')}, iodepth 16, {meta.get('jobs', 1)} job(s), "
           f"{meta.get('ios_4k')} I/Os per job at 4k and {meta.get('ios_128k')} at 128k per "
           f"repetition, median of {meta.get('reps')} repetitions in one boot (profile={meta.get('profile')}).",
           "", "Counts: guest instructions between marks around fio's I/O loop, all CPUs, spin-wait "
           "loops excluded; arch counts a rep-prefixed string instruction once, raw counts every "
           "iteration (the copies); a mark pair's own cost (median null interval: "
           f"{doc['null']['total_raw']:,} raw) is subtracted. Commands: /sys/block/<disk>/stat "
           "(SCSI commands; ublk requests). See docs/benchmarks.md.", "",
           f"Host load at the start `{doc['host_load_start']}`, end `{doc['host_load_end']}`; "
           f"the boot took {doc['wall_s']} s wall.", "",
           "| back end | workload | cmds/I/O | user/cmd | kernel/cmd | total/cmd | total/I/O | x ref "
           "| raw/I/O | raw x ref | rep/I/O | spread | ticks/I/O |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c, i = r["per_cmd"] or {}, r["per_io"] or {}
        ref = rbd_base if "rbd" in r["label"] else base
        b = ref.get(r["workload"], {}).get("per_io")
        ratio = f"{i['total_arch'] / b['total_arch']:.2f}" if b and i else "–"
        rratio = f"{i['total_raw'] / b['total_raw']:.2f}" if b and i else "–"
        out.append("| " + " | ".join([
            r["label"], r["workload"], f"{r['commands_per_io']:.2f}", fmt(c.get("user_arch")),
            fmt(c.get("kernel_arch")), fmt(c.get("total_arch")), fmt(i.get("total_arch")), ratio,
            fmt(i.get("total_raw")), rratio, fmt((i.get("user_rep") or 0) + (i.get("kernel_rep") or 0)),
            f"{r['spread_pct']}%", f"{i.get('ticks', 0):.3f}"]) + " |")
    out += ["", "x ref: against fileio for the file rows, against tcmu-runner-rbd for the rbd rows. "
            "user, kernel, total: arch instructions; spread: (max - min) / median of total/I/O "
            "over the repetitions; ticks: local timer interrupts per I/O during the fio run (each costs "
            "instructions, and a loaded host makes more of them per I/O)."]
    if any(r.get("marginal") for r in rows):
        out += ["", "Marginal cost per command (BENCH_INSN_LONG_X: each even repetition reads "
                f"{meta.get('long_x') or '?'} times the I/Os of the odd one before it): (long - short) / the "
                "extra commands, median over the pairs, and per run what is not per command (the "
                "intercept: fio's start-up and exit, the daemon's first wake-up; the mark pair already "
                "subtracted). The table above divides that intercept by the short run's commands; this "
                "one leaves it out, as a time-based run does.", "",
                "| back end | workload | pairs | user/cmd | kernel/cmd | total/cmd | x ref | raw/cmd "
                "| raw x ref | per run (M, total) |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            m = r.get("marginal")
            if not m:
                continue
            ref = rbd_base if "rbd" in r["label"] else base
            b = (ref.get(r["workload"]) or {}).get("marginal")
            out.append("| " + " | ".join([
                r["label"], r["workload"], str(m["pairs"]), fmt(m["user_arch"]), fmt(m["kernel_arch"]),
                fmt(m["total_arch"]), f"{m['total_arch'] / b['total_arch']:.3f}" if b else "–",
                fmt(m["total_raw"]), f"{m['total_raw'] / b['total_raw']:.3f}" if b else "–",
                f"{m['total_arch_fixed'] / 1e6:.1f}"]) + " |")
    out += ["", "Time, which the host's load decides (the plugin slows the guest; not a benchmark): "
            "per repetition, IOPS, the guest's speed (million instructions per second, all vCPUs) and "
            "the vCPUs' idle share. Where the guest is rarely idle, IOPS follow the guest's speed "
            "divided by the instructions per I/O.", "",
            "| back end | workload | IOPS | M insn/s | idle % |", "|---|---|---|---|---|"]
    for r in rows:
        t = [p.get("time", {}) for p in r["reps"]]
        out.append(f"| {r['label']} | {r['workload']} | " + " | ".join(
            " / ".join(f"{x.get(k, 0):,.0f}" for x in t) for k in ("iops", "minsn_s", "idle_pct")) + " |")
    out += ["", "Spin-wait instructions (PAUSE loops, left out of every count above) per command, median over "
            "the repetitions: time a vCPU waited for a lock or for another vCPU (an IPI's answer), which "
            "grows when the host deschedules the vCPU that holds it.", "",
            "| back end | workload | user spin/cmd | kernel spin/cmd |", "|---|---|---|---|"]
    for r in rows:
        c = r["per_cmd"] or {}
        out.append(f"| {r['label']} | {r['workload']} | {fmt(c.get('user_spin'))} | {fmt(c.get('kernel_spin'))} |")
    marginal = rbd_bench_marginal(rows)
    if marginal:
        out += ["", "librbd's ceiling in this guest: `rbd bench` (rbd-bench-1x: N ops, rbd-bench-2x: 2N ops, "
                "the same depth as the fio rows), the marginal cost of one op = (total of 2x - total of 1x) / N, "
                "which leaves out the process's start-up; beside it the daemons' instructions per I/O "
                "(fio, SCSI, TCMU and the daemon included) and the IOPS ratio to the ceiling that equal "
                "guest speed would give (ceiling instructions / daemon instructions).", "",
                "| workload | rbd bench marginal/op (arch) | (raw) | " + " | ".join(
                    f"{label} /I/O (x ceiling)" for label in marginal["labels"]) + " |",
                "|---|---|---|" + "---|" * len(marginal["labels"])]
        for w, m in marginal["workloads"].items():
            cells = []
            for label in marginal["labels"]:
                d = m["daemons"].get(label)
                cells.append(f"{d:,} ({m['arch'] / d:.2f})" if d else "–")
            out.append(f"| {w} | {m['arch']:,} | {m['raw']:,} | " + " | ".join(cells) + " |")
    if doc.get("rounds"):
        out += ["", "tcmud's completion batches (`tcmudctl metrics` before and after each counted run, all "
                "queues; median over the repetitions): commands per doorbell write, and how many queues "
                "the commands went through. Fewer commands per batch means the per-round costs (wake-up, "
                "io_uring enter, ring checks, doorbell) are paid more often:", "",
                "| back end | workload | commands | cmds/doorbell | queues used |", "|---|---|---|---|---|"]
        for r in doc["rounds"]:
            out.append(f"| {r['label']} | {r['workload']} | {r['commands']:,} | {r['cmds_per_doorbell']} | "
                       f"{r['queues_used']} |")
    if doc.get("threads"):
        out += ["", "The daemon's CPU by thread (utime + stime clock ticks per 1,000 commands, median over "
                "the repetitions; own: the daemon's threads, Ceph: librados'/librbd's). Ticks are emulated time, "
                "so they grow when the host slows the guest: compare the shares, not the totals:", "",
                "| back end | workload | own | Ceph | own % | read/write syscalls per command, own; Ceph's "
                "| busiest threads |", "|---|---|---|---|---|---|---|"]
        for t in doc["threads"]:
            sc = t.get("syscalls")
            sct = f"{sc[0]} / {sc[1]}; {sc[2]} / {sc[3]}" if sc else "–"
            out.append(f"| {t['label']} | {t['workload']} | {t['own']} | {t['ceph']} | {t['own_pct']}% | {sct} | "
                       + ", ".join(f"{k} {v}" for k, v in t["top"]) + " |")
    return "\n".join(out) + "\n"


def plot(doc, png):
    """One panel per workload: user and kernel arch instructions per I/O, stacked, per back end."""
    workloads = list(dict.fromkeys(r["workload"] for r in doc["rows"]))
    with tempfile.TemporaryDirectory() as tmp:
        gp = [f'set terminal pngcairo size {560 * len(workloads)},480 font "sans,10"', f'set output "{png}"',
              "set style data histograms", "set style histogram rowstacked", "set style fill solid 0.8 border -1",
              "set boxwidth 0.7", "set grid ytics", "set yrange [0:*]", "set key top left",
              # labels such as tcmud-before-rbd overlap when level
              "set xtics rotate by -30 scale 0", "set bmargin 6",
              "set format y '%.0s%c'", f"set multiplot layout 1,{len(workloads)} title \"{doc['title']}\""]
        for i, w in enumerate(workloads):
            dat = os.path.join(tmp, f"{i}.dat")
            with open(dat, "w") as f:
                for r in doc["rows"]:
                    if r["workload"] == w and r["per_io"]:
                        f.write(f"{r['label']} {r['per_io']['user_arch']} {r['per_io']['kernel_arch']}\n")
            gp += [f"set title '{w}: instructions per I/O (arch)'",
                   f"plot '{dat}' using 2:xtic(1) title 'user', '' using 3 title 'kernel'"]
        gp.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(gp), text=True, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmout", required=True)
    ap.add_argument("--stem", required=True)
    for a in ("commit", "bench-commit", "command", "host-load-start", "host-load-end", "wall-s"):
        ap.add_argument("--" + a, default="")
    args = ap.parse_args()
    meta, null, rows, thr = analyse(args.vmout)
    date = datetime.datetime.now().isoformat(timespec="seconds")
    doc = dict(date=date, command=args.command, tcmud_commit=args.commit, bench_scripts_commit=args.bench_commit,
               host_load_start=args.host_load_start.strip(), host_load_end=args.host_load_end.strip(),
               wall_s=args.wall_s, meta=meta, null=null, rows=rows, threads=thr,
               rounds=rounds(os.path.join(args.vmout, "bench-insn")), png=args.stem + ".png",
               title=f"tcmud {args.commit}, {meta.get('guest_cpus')} vCPUs TCG + insncount, {date}")
    if rows:
        plot(doc, doc["png"])
    with open(args.stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    md = markdown(doc)
    with open(args.stem + ".md", "w") as f:
        f.write(md)
    print(md)
    print(f"JSON: {args.stem}.json\nMarkdown: {args.stem}.md\nPlot: {doc['png']}")


if __name__ == "__main__":
    main()
