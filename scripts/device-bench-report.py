#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The markdown table of a scripts/device-bench.sh run, with issue 16's
three IOPS ratios, from OUT/results.txt (the guest's result lines) and
OUT/host.txt.

    scripts/device-bench-report.py OUT

results.txt lines (scripts/device-bench-init.sh):
    P key=value ...                      the guest's parameters
    R LABEL HALF WORKLOAD JOBS IOPS BW_KIB COMMANDS DAEMON_TICKS USR SYS
    DONE kernel_reports=N | FAIL why
"""
import sys
from pathlib import Path


def kv(text):
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def main():
    out = Path(sys.argv[1])
    host = kv((out / "host.txt").read_text()) if (out / "host.txt").exists() else {}
    lines = (out / "results.txt").read_text().splitlines() if (out / "results.txt").exists() else []
    params, rows, tail = {}, [], []
    for line in lines:
        f = line.split()
        if not f:
            continue
        if f[0] == "P":
            params = dict(x.split("=", 1) for x in f[1:] if "=" in x)
        elif f[0] == "R" and len(f) == 11:
            rows.append(dict(label=f[1], half=f[2], workload=f[3], jobs=int(f[4]),
                             iops=float(f[5]), bw_kib=float(f[6]), cmds=int(f[7]),
                             ticks=f[8], usr=f[9], sys=f[10]))
        elif f[0] in ("DONE", "FAIL"):
            tail.append(line)
    p = print
    p("## Host and guest\n")
    p(f"- host CPU: {host.get('cpu', '?')} ({host.get('host_cpus', '?')} CPUs), "
      f"host kernel {host.get('kernel_host', '?')}")
    p(f"- accel: {host.get('accel', '?')}; guest: {host.get('smp', '?')} vCPUs "
      f"(guest saw {params.get('nproc', '?')}), {host.get('mem_mb', '?')} MiB")
    p(f"- backing file: {params.get('size_mb', '?')} MiB on {params.get('fs', '?')}; "
      f"fio libaio direct=1 randread, iodepth {params.get('iodepth', '?')} per job, "
      f"{params.get('runtime', '?')} s after {params.get('ramp', '?')} s ramp; "
      f"whole run {host.get('wall_s', '?')} s wall")
    p(f"- guest end: {'; '.join(tail) or 'no DONE line: the guest did not finish'}\n")
    p("## Runs\n")
    p("| back end | modules | workload | jobs | IOPS | MiB/s | cmds/IO | daemon CPU s | fio usr/sys % |")
    p("|---|---|---|---|---:|---:|---:|---:|---|")
    secs = float(params.get("runtime", 0) or 0) + float(params.get("ramp", 0) or 0)
    for r in rows:
        ios = r["iops"] * float(params.get("runtime", 1) or 1)
        cpi = r["cmds"] / ios if ios else 0
        cpu = "-" if r["ticks"] == "-" else f"{int(r['ticks']) / 100:.1f}"
        p(f"| {r['label']} | {r['half']} | {r['workload']} | {r['jobs']} | {r['iops']:,.0f} | "
          f"{r['bw_kib'] / 1024:,.1f} | {cpi:.2f} | {cpu} | {r['usr']}/{r['sys']} |")
    if secs:
        p(f"\n(cmds/IO: SCSI commands the disk completed over ramp + run, {secs:g} s, "
          "per I/O fio counted in the run; above 1 by the ramp's share. Daemon CPU: "
          "utime + stime of all tcmud threads over the same window.)")

    def get(label, workload, jobs, half=None):
        for r in rows:
            if r["label"] == label and r["workload"] == workload and r["jobs"] == jobs and \
                    (half is None or r["half"] == half):
                return r["iops"]
        return None

    def ratio(a, b):
        return f"{a / b:.2f}" if a and b else "n/a"

    nq = sorted({r["label"] for r in rows if r["half"] == "patched" and r["label"] != "fileio"},
                key=lambda s: int(s.split("-")[1].rstrip("q")) if s.split("-")[1].rstrip("q").isdigit() else 0)
    p("\n## Issue 16's goals\n")
    p("| goal | tcmud row | tcmud IOPS | against | its IOPS | ratio | target | met |")
    p("|---|---|---:|---|---:|---:|---:|---|")
    goals = [("4k randread, 2 jobs: patched tcmud vs fileio", "randread-4k", 2, "fileio", ["patched"], 0.90),
             ("128k randread, 2 jobs: patched tcmud vs fileio", "randread-128k", 2, "fileio", ["patched"], 1.0),
             ("4k randread, 4 jobs: N queues vs stock ring", "randread-4k", 4, "tcmud-stock",
              ["stock", "stock2"], 1.5)]
    for name, w, j, base, halves, target in goals:
        bs = [(h, get(base, w, j, h)) for h in halves if get(base, w, j, h)]
        if len(bs) > 1:
            bs.append(("mean of " + " and ".join(h for h, _ in bs), sum(v for _, v in bs) / len(bs)))
        for lab in nq:
            a = get(lab, w, j, "patched")
            for h, b in bs or [(halves[0], None)]:
                met = "n/a" if not (a and b) else ("yes" if a / b >= target else "no")
                p(f"| {name} | {lab} | {a or 0:,.0f} | {base} ({h}) | {b or 0:,.0f} | {ratio(a, b)} | "
                  f"{target:.2f} | {met} |")
    cases = sorted({(r["workload"], r["jobs"]) for r in rows})
    p("\nFor reference (same boot): tcmud on the stock ring vs fileio, same half: "
      + "; ".join(f"{h}: " + ", ".join(f"{w} j{j} {ratio(get('tcmud-stock', w, j, h), get('fileio', w, j, h))}"
                                       for w, j in cases)
                  for h in ("stock", "stock2") if any(r["half"] == h for r in rows)) + ".")
    p("Drift over the boot, as later / first stock half: fileio patched/stock "
      + ", ".join(f"{w} j{j} {ratio(get('fileio', w, j, 'patched'), get('fileio', w, j, 'stock'))}"
                  for w, j in cases)
      + ("; fileio stock2/stock " + ", ".join(
          f"{w} j{j} {ratio(get('fileio', w, j, 'stock2'), get('fileio', w, j, 'stock'))}" for w, j in cases)
         + "; tcmud-stock stock2/stock " + ", ".join(
          f"{w} j{j} {ratio(get('tcmud-stock', w, j, 'stock2'), get('tcmud-stock', w, j, 'stock'))}"
          for w, j in cases) if any(r["half"] == "stock2" for r in rows) else "") + ".")

if __name__ == "__main__":
    main()
