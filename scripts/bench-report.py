#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Tabulates one run of tests/vm/scenarios/bench-mq.sh (called by scripts/bench.sh).

Reads the guest's bench/ directory (fio JSON per run, counters.tsv,
callgrind.tsv, queues.tsv, meta.env) and writes STEM.json (one object per
row plus the run's metadata), STEM.md (tables) and STEM.png (gnuplot).
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import tempfile

# Row labels in the order the guest runs them, with what each one is.
KNOWN = {"fileio": ("fileio", "stock", None), "tcmu-runner": ("tcmu-runner", "stock", None),
         "tcmud": ("tcmud", "stock", None),
         "tcmu-runner-rbd": ("tcmu-runner rbd", "stock", None), "tcmud-rbd": ("tcmud rbd", "stock", None)}


def pair_of(label):
    """'pair3-tcmud-1q' -> (3, 'tcmud-1q'); (None, label) for a row outside the paired runs"""
    head, _, rest = label.partition("-")
    if head.startswith("pair") and head[4:].isdigit() and rest:
        return int(head[4:]), rest
    return None, label


def describe(label):
    """label -> (target, modules, nr_queues): tcmud-Nq, tcmud-rbd-Nq on the patched modules"""
    label = pair_of(label)[1]
    if label in KNOWN:
        return KNOWN[label]
    if label.startswith("tcmud-rbd-"):
        return ("tcmud rbd", "patched", int(label[len("tcmud-rbd-"):-1]))
    return ("tcmud", "patched", int(label[len("tcmud-"):-1]))


def rbd_ceilings(doc):
    """rbd-bench.tsv -> {where: {workload: (ops_per_sec, cpu_us_per_op)}}; the
    old three-column form (workload threads ops) was the host's."""
    out = {}
    for row in doc["rbd_bench"]:
        if len(row) == 3:
            row = ["host"] + row + ["-"]
        where, w, _, ops, cpu = row[:5]
        out.setdefault(where, {})[w] = (float(ops), None if cpu == "-" else float(cpu))
    return out


def rbd_labels(doc):
    """tcmu-runner rbd first, then tcmud rbd (stock, then 1, 2, 4 queues)."""
    labels = list(dict.fromkeys(r["label"] for r in doc["results"] if r["target"].endswith(" rbd")))
    return sorted(labels, key=lambda l: (not l.startswith("tcmu-runner"), l != "tcmud-rbd", l))


def rbd_summary(doc, workloads):
    """The rbd rows against the goals of issue 10, at 2 fio jobs: tcmud rbd
    / tcmu-runner rbd (goal >= 1.5x at 4k randread, 4k randwrite, 128k
    randread) and / `rbd bench` in the guest (goal >= 70 % at 4k): the
    in-guest run pays the same emulation cost for librbd as the daemons do;
    the host's runs natively and is shown only for scale."""
    ceil = rbd_ceilings(doc)
    if not ceil:
        return []
    host, guest = ceil.get("host", {}), ceil.get("guest", {})
    by = {(r["label"], r["workload"], r["jobs"]): r for r in doc["results"]}
    tcmud = [l for l in rbd_labels(doc) if l.startswith("tcmud")]
    threads = doc["rbd_bench"][0][-3]
    out = ["", "## rbd: against tcmu-runner and librbd's ceiling (2 fio jobs)", "",
           f"`rbd bench`: rand, {threads} io-threads (2 fio jobs x iodepth), the fio workload's io "
           "size, rbd_cache=false; **guest** = in this boot's guest (librbd emulated, as the daemons' "
           "is: the ceiling the goals are judged against), host = natively on the host (for scale "
           "only). Cells: IOPS (x tcmu-runner rbd, % of the in-guest rbd bench). Goals: >= x1.50 at "
           "all three, >= 70 % at 4k.", "",
           "| workload | rbd bench host | rbd bench guest | tcmu-runner rbd | " + " | ".join(tcmud) + " |",
           "|" + "---|" * (4 + len(tcmud))]
    for w in workloads:
        runner = by.get(("tcmu-runner-rbd", w, 2), {}).get("iops")
        g = guest.get(w, (None, None))[0]
        cells = []
        for l in tcmud:
            iops = by.get((l, w, 2), {}).get("iops")
            ratio = f"x{iops / runner:.2f}" if iops and runner else "–"
            pct = f"{100 * iops / g:.0f} %" if iops and g else "–"
            cells.append(f"{fmt(iops)} ({ratio}, {pct})")
        h = host.get(w, (None, None))[0]
        out.append("| " + " | ".join([w, fmt(round(h)) if h else "–", fmt(round(g)) if g else "–",
                                      fmt(runner)] + cells) + " |")
    if guest:
        out += ["", "CPU-µs per I/O in the guest: `rbd bench` (the whole process: librbd and its "
                "threads) against each daemon (per SCSI command, 2 jobs):", "",
                "| workload | rbd bench guest | tcmu-runner rbd | " + " | ".join(tcmud) + " |",
                "|" + "---|" * (3 + len(tcmud))]
        for w in workloads:
            cells = [fmt(by.get((l, w, 2), {}).get("cpu_us_per_cmd")) for l in ["tcmu-runner-rbd"] + tcmud]
            out.append("| " + " | ".join([w, fmt(guest.get(w, (None, None))[1])] + cells) + " |")
    return out


def plot_rbd(doc, workloads, png):
    """The rbd rows at 2 fio jobs, one panel per workload: IOPS bars for each
    daemon beside the in-guest and host `rbd bench` ceilings."""
    ceil = rbd_ceilings(doc)
    labels = rbd_labels(doc)
    if not labels:
        return None
    by = {(r["label"], r["workload"], r["jobs"]): r for r in doc["results"]}
    bars = [("rbd bench (guest)", lambda w: ceil.get("guest", {}).get(w, (None,))[0])]
    bars += [(l, lambda w, l=l: by.get((l, w, 2), {}).get("iops")) for l in labels]
    bars += [("rbd bench (host)", lambda w: ceil.get("host", {}).get(w, (None,))[0])]
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "rbd.dat")
        with open(dat, "w") as f:
            for w in workloads:
                f.write(f"# {w}\n")
                for name, get in bars:
                    v = get(w)
                    f.write(f'"{name}" {"?" if v is None else v}\n')
                f.write("\n\n")
        gp = [f'set terminal pngcairo size {520 * len(workloads)},520 font "sans,10"',
              f'set output "{png}"', 'set datafile missing "?"',
              f"set multiplot layout 1,{len(workloads)} title \"rbd rows, 2 fio jobs x iodepth "
              f"{doc['meta'].get('iodepth')}: {doc['title']}\"",
              "set style fill solid 0.8 border -1", "set boxwidth 0.7", "set grid ytics",
              "set yrange [0:*]", "set xtics rotate by -35 font ',8'", "set ylabel 'IOPS'",
              "unset key", "set logscale y", "set yrange [10:*]"]
        for i, w in enumerate(workloads):
            gp += [f"set title '{w} (log scale)'",
                   f"plot '{dat}' index {i} using 0:2:(($0 == 0 || $0 == {len(bars) - 1}) ? 3 : ($0 == 1 ? 4 : 1))"
                   ":xtic(1) with boxes lc variable, "
                   f"'' index {i} using 0:2:(sprintf('%.0f', $2)) with labels offset 0,0.7 font ',8'"]
        gp.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(gp), text=True, check=True)
    return png


def fio_result(path):
    text = open(path).read()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    side = job["write"] if job["write"]["total_ios"] else job["read"]
    return dict(iops=round(side["iops"]), bw_bytes=side["bw_bytes"],
                mb_s=round(side["bw_bytes"] / 1e6, 1), mib_s=round(side["bw_bytes"] / 2**20, 1),
                fio_ios=side["total_ios"], lat_mean_us=round(side["lat_ns"]["mean"] / 1000, 1))


def read_rows(bench, clk_tck, iodepth):
    rows = []
    for line in open(os.path.join(bench, "counters.tsv")):
        # idle_pct, the 8th field, is missing from runs made before it
        label, workload, jobs, cmds, vol, invol, ticks, *idle = line.split()
        target, modules, nq = describe(label)
        row = dict(label=label, target=target, modules=modules, nr_queues=nq, workload=workload,
                   jobs=int(jobs), iodepth=iodepth)
        row.update(fio_result(os.path.join(bench, f"{label}-{workload}-j{jobs}.json")))
        cmds = int(cmds)
        row["commands"] = cmds
        if idle:
            row["guest_idle_pct"] = float(idle[0])
        if vol != "-" and cmds:
            row.update(ctxt_voluntary=int(vol), ctxt_nonvoluntary=int(invol), cpu_ticks=int(ticks),
                       ctxt_per_cmd=round((int(vol) + int(invol)) / cmds, 3),
                       cpu_us_per_cmd=round(int(ticks) * 1e6 / clk_tck / cmds, 1))
        rows.append(row)
    return rows


def paired(rows):
    """The paired runs (bench-mq.sh's BENCH_PAIRS) by workload and jobs: each pair's IOPS
    and tcmud-1q / fileio ratio, and the median and range of the ratios."""
    by = {}
    for r in rows:
        n, base = pair_of(r["label"])
        if n is not None:
            by.setdefault((r["workload"], r["jobs"]), {}).setdefault(n, {})[base] = r["iops"]
    out = []
    for (workload, jobs), runs in by.items():
        pairs = []
        for n in sorted(runs):
            f, t = runs[n].get("fileio"), runs[n].get("tcmud-1q")
            if f and t is not None:
                pairs.append(dict(pair=n, first="fileio" if n % 2 else "tcmud-1q", fileio_iops=f,
                                  tcmud_iops=t, ratio=round(t / f, 4)))
        if not pairs:
            continue
        ratios = [p["ratio"] for p in pairs]
        out.append(dict(workload=workload, jobs=jobs, pairs=pairs, ratio_median=round(statistics.median(ratios), 4),
                        ratio_min=min(ratios), ratio_max=max(ratios),
                        fileio_iops_median=round(statistics.median(p["fileio_iops"] for p in pairs)),
                        tcmud_iops_median=round(statistics.median(p["tcmud_iops"] for p in pairs))))
    return out


def paired_markdown(doc):
    if not doc.get("pairs"):
        return []
    out = ["", "## Paired runs: tcmud-1q against fileio, in turn", "",
           "Both served at once on the patched modules"
           + (" (tcmud-1q with data_area_fixed=1)" if doc["meta"].get("kmod_fixed") == "1" else "")
           + "; each pair runs both once, the order swapped every pair (ABBA).", "",
           "| workload | jobs | pair | first | fileio | tcmud-1q | ratio |", "|---|---|---|---|---|---|---|"]
    for g in doc["pairs"]:
        out += [f"| {g['workload']} | {g['jobs']} | {p['pair']} | {p['first']} | {p['fileio_iops']:,} | "
                f"{p['tcmud_iops']:,} | {p['ratio']:.3f} |" for p in g["pairs"]]
    out += ["", "| workload | jobs | pairs | fileio IOPS, median | tcmud-1q IOPS, median | "
            "ratio, median | ratio, range |", "|---|---|---|---|---|---|---|"]
    out += [f"| {g['workload']} | {g['jobs']} | {len(g['pairs'])} | {g['fileio_iops_median']:,} | "
            f"{g['tcmud_iops_median']:,} | **{g['ratio_median']:.3f}** | "
            f"{g['ratio_min']:.3f}-{g['ratio_max']:.3f} |" for g in doc["pairs"]]
    return out


def read_tsv(path):
    return [line.split() for line in open(path)] if os.path.exists(path) else []


def fmt(v, digits=1):
    if v is None:
        return "–"
    return f"{v:,}" if isinstance(v, int) else f"{v:,.{digits}f}"


def tcg_note(doc):
    """How guest time ran: with -icount it is the guest's instructions, not the host's clock."""
    if doc.get("icount_shift") is None:
        return ""
    return (f" with -icount shift={doc['icount_shift']},sleep=on (guest time = the guest's instructions, "
            f"all vCPUs summed, {2 ** doc['icount_shift']} ns each: IOPS follow the work per command, "
            "not the host's load)")


def markdown(doc, labels, workloads, jobs_set):
    rows, meta = doc["results"], doc["meta"]
    by = {(r["label"], r["workload"], r["jobs"]): r for r in rows}
    out = [f"# Multi-queue benchmark {doc['date']}", "",
           f"`{doc['command']}` — tcmud {doc['tcmud_commit']} ({doc['tcmud_buildtype']}), bench scripts "
           f"{doc['bench_scripts_commit']}, guest kernel "
           f"{meta.get('kernel')}, {meta.get('guest_cpus')} vCPUs under TCG{tcg_note(doc)}, {meta.get('fio')}, "
           f"tcmu-runner {meta.get('tcmu_runner')}; {meta.get('runtime_s')} s per run after "
           f"{meta.get('ramp_s')} s ramp, iodepth {meta.get('iodepth')} per fio job.", "",
           doc["setup"] + ".", "", "Commands: " + doc["commands_note"] + ".", "",
           f"Host load (2-core machine shared with other VM jobs): start `{doc['host_load_start']}`; "
           f"end `{doc['host_load_end']}`; the boot took {doc['wall_s']} s wall.", "",
           f"Plot: `{os.path.basename(doc['png'])}`" +
           (f"; rbd rows: `{os.path.basename(doc['png_rbd'])}`" if doc.get("png_rbd") else "") + ".", "",
           "## IOPS", ""]
    head = ["workload", "jobs"] + labels
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for w in workloads:
        for j in jobs_set:
            out.append("| " + " | ".join([w, str(j)] + [fmt(by.get((l, w, j), {}).get("iops"))
                                                        for l in labels]) + " |")
    out += ["", "## Every row", "",
            "| workload | jobs | target | modules | queues | IOPS | MB/s | lat µs | commands | ctxsw/cmd | CPU-µs/cmd | guest idle % |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for w in workloads:
        for j in jobs_set:
            for l in labels:
                r = by.get((l, w, j))
                if not r:
                    continue
                out.append("| " + " | ".join([
                    w, str(j), r["target"], r["modules"], fmt(r["nr_queues"]), fmt(r["iops"]),
                    fmt(r["mb_s"]), fmt(r["lat_mean_us"]), fmt(r["commands"]),
                    fmt(r.get("ctxt_per_cmd"), 2), fmt(r.get("cpu_us_per_cmd")),
                    fmt(r.get("guest_idle_pct"), 1)]) + " |")
    cg = doc["callgrind"]
    out += ["", f"## Instructions per command (callgrind, user space, all threads; 4k randread qd16, "
            f"{meta.get('callgrind_jobs')} jobs x {meta.get('callgrind_ios')} reads)", ""]
    if cg:
        out += ["| daemon | commands | instructions | instructions/cmd |", "|---|---|---|---|"]
        out += [f"| {c['label']} | {c['commands']:,} | {c['instructions']:,} | {fmt(c['instr_per_cmd'])} |"
                for c in cg]
    else:
        out.append("Not measured in this run.")
    if doc["queues"]:
        out += ["", "## tcmud's per-queue totals (all runs on that device)", "",
                "| device | queue | commands | doorbells | commands/doorbell |", "|---|---|---|---|---|"]
        out += [f"| {q['label']} | {q['queue']} | {q['commands']:,} | {q['doorbells']:,} | "
                f"{fmt(round(q['commands'] / q['doorbells'], 2) if q['doorbells'] else None, 2)} |"
                for q in doc["queues"]]
    out += paired_markdown(doc)
    out += rbd_summary(doc, workloads)
    return "\n".join(out) + "\n"


def plot(doc, labels, workloads, jobs_set, png):
    """2 x len(workloads) panels: IOPS and daemon CPU-µs/cmd against fio jobs."""
    by = {(r["label"], r["workload"], r["jobs"]): r for r in doc["results"]}
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "bench.dat")
        with open(dat, "w") as f:
            for w in workloads:
                f.write(f"# {w}\n")
                for j in jobs_set:
                    vals = [by.get((l, w, j), {}).get(k) for k in ("iops", "cpu_us_per_cmd") for l in labels]
                    f.write(" ".join([str(j)] + ["?" if v is None else str(v) for v in vals]) + "\n")
                f.write("\n\n")
        n = len(labels)
        gp = [f'set terminal pngcairo size {520 * len(workloads)},900 font "sans,10"',
              f'set output "{png}"', 'set datafile missing "?"', "set key top left font ',8'",
              f"set multiplot layout 2,{len(workloads)} title \"{doc['title']}\"",
              f"set xtics ({', '.join(str(j) for j in jobs_set)})", "set xlabel 'fio jobs'",
              "set grid", "set yrange [0:*]", "set offsets 0.3, 0.3, 0, 0"]
        for metric, ylabel, first in (("IOPS", "IOPS", 2), ("CPU", "daemon CPU-µs per command", 2 + n)):
            for i, w in enumerate(workloads):
                gp += [f"set title '{w}: {ylabel}'", f"set ylabel '{ylabel}'"]
                series = [f"'{dat}' index {i} using 1:{first + k} with linespoints lt {k + 1} lw 2 title '{l}'"
                          for k, l in enumerate(labels) if not (metric == "CPU" and l == "fileio")]
                gp.append("plot " + ", ".join(series))
        gp.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(gp), text=True, check=True)


def main():
    ap = argparse.ArgumentParser()
    for a in ("bench", "stem", "commit", "bench-commit", "buildtype", "command", "smp", "host-load-start",
              "host-load-end", "wall-s"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--icount", default="", help="QEMU -icount shift of the boot, if any")
    args = ap.parse_args()
    meta = dict(line.strip().split("=", 1) for line in open(os.path.join(args.bench, "meta.env"))
                if "=" in line)
    rows = read_rows(args.bench, int(meta.get("clk_tck", 100)), int(meta.get("iodepth", 16)))
    # The paired runs have their own section, not columns of the tables and plot.
    labels = list(dict.fromkeys(r["label"] for r in rows if pair_of(r["label"])[0] is None))
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    jobs_set = sorted({r["jobs"] for r in rows})
    callgrind = [dict(label=l, commands=int(c), instructions=int(i),
                      instr_per_cmd=round(int(i) / int(c)) if int(c) else None)
                 for l, c, i in read_tsv(os.path.join(args.bench, "callgrind.tsv"))]
    queues = [dict(label=l, queue=int(q), commands=int(c), doorbells=int(b))
              for l, q, c, b in read_tsv(os.path.join(args.bench, "queues.tsv"))]
    date = datetime.datetime.now().isoformat(timespec="seconds")
    doc = dict(date=date, command=args.command, tcmud_commit=args.commit,
               bench_scripts_commit=args.bench_commit,
               tcmud_buildtype=args.buildtype, smp=int(args.smp), meta=meta,
               icount_shift=int(args.icount) if args.icount else None,
               host_load_start=args.host_load_start.strip(), host_load_end=args.host_load_end.strip(),
               wall_s=int(args.wall_s), png=args.stem + ".png",
               title=f"tcmud {args.commit}, {meta.get('guest_cpus')} vCPUs TCG"
                     f"{f' icount {args.icount}' if args.icount else ''}, "
                     f"{meta.get('runtime_s')} s/run, iodepth {meta.get('iodepth')}/job, {date}",
               setup="256 MiB file on XFS (a loop device in the guest; write-back cache on every "
                     "target), prefilled (1 MiB of random bytes repeated), exported through tcm_loop "
                     "with the none scheduler; fio libaio direct=1 time_based; fileio = LIO "
                     "target_core_file; tcmu-runner = Debian's qcow handler on the raw image; "
                     "tcmud = user:file; tcmud-Nq = tcmud on the patched modules with nr_queues=N"
                     + (f" and data_area_fixed=1 (max_data_area_mb {meta.get('kmod_fixed_mb')}: the data "
                        "area registered as io_uring fixed buffers)" if meta.get("kmod_fixed") == "1" else "")
                     + "; "
                     "*-rbd = the same daemons on a prefilled 256 MiB rbd image of a one-node "
                     "memstore Ceph on the host (scripts/ceph-testbed.sh), librbd cache off",
               commands_note="SCSI commands completed by the disk (/sys/block/sdX/stat) over the "
                             "whole fio run incl. ramp; 128k reads are 2 commands on tcmu-runner "
                             "(max_sectors_kb 64), 1 on fileio and tcmud; ctxsw = voluntary + involuntary "
                             "switches of all the daemon's threads; CPU = utime + stime of the daemon",
               results=rows, callgrind=callgrind, queues=queues, pairs=paired(rows),
               rbd_bench=read_tsv(os.path.join(args.bench, "rbd-bench.tsv")))
    file_labels = [l for l in labels if not describe(l)[0].endswith(" rbd")]
    plot(doc, file_labels, workloads, jobs_set, doc["png"])
    doc["png_rbd"] = plot_rbd(doc, workloads, args.stem + "-rbd.png")
    with open(args.stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    md = markdown(doc, labels, workloads, jobs_set)
    with open(args.stem + ".md", "w") as f:
        f.write(md)
    print(md)
    print(f"JSON: {args.stem}.json\nMarkdown: {args.stem}.md\nPlot: {doc['png']}" +
          (f"\nPlot (rbd): {doc['png_rbd']}" if doc.get("png_rbd") else ""))


if __name__ == "__main__":
    main()
