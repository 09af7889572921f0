#!/usr/bin/env bash
# Benchmark (not a test): LIO fileio, tcmud and Debian's tcmu-runner side by
# side, from ONE VM boot (tests/vm/scenarios/bench-stock.sh), on the same
# prefilled 256 MiB file on the guest's tmpfs, exported through tcm_loop, with
# the same fio jobs (libaio, direct, time-based):
#   randread-4k    iodepth 16, 2 jobs
#   randread-128k  iodepth 16, 2 jobs
#   randwrite-4k   iodepth 16, 1 job
# Besides IOPS and MiB/s (emulated time: noisy, compare only within one run)
# it counts what time does not blur, for the two daemons: context switches
# and CPU time (utime+stime) per SCSI command, and instructions per command
# under valgrind's callgrind on a fixed number of 4k reads.
#
#   scripts/bench.sh [--build DIR] [--out DIR] [--runtime S] [--callgrind-ios N]
#                    [--no-callgrind]
#
# --build   meson build directory with daemon/core/tcmud (default: build)
# --out     where <date>.json and <date>.md go (default: bench-results)
# Prints the markdown table; the raw fio JSON and daemon logs stay in
# <build>/vm-out/bench-stock/.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
command="scripts/bench.sh $*"
build=$src/build out=$src/bench-results runtime=8 callgrind=1 callgrind_ios=300
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(realpath "$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	--runtime) runtime=$2; shift 2 ;;
	--callgrind-ios) callgrind_ios=$2; shift 2 ;;
	--no-callgrind) callgrind=0; shift ;;
	-h|--help) sed -n '2,21p' "$0"; exit 0 ;;
	*) echo "bench: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -f "$build/build.ninja" ] && ninja -C "$build" daemon/core/tcmud >&2
[ -x "$build/daemon/core/tcmud" ] ||
	{ echo "bench: no $build/daemon/core/tcmud (meson setup $build && ninja -C $build)" >&2; exit 2; }

cat > "$build/bench.env" <<ENV
BENCH_RUNTIME=$runtime
BENCH_CALLGRIND=$callgrind
BENCH_CALLGRIND_IOS=$callgrind_ios
ENV
vmout=$build/vm-out/bench-stock
# The verdict also fails the run on kernel warnings such as a hung task
# (a daemon under valgrind that never answered); the timed figures are
# still good as long as all nine runs were recorded.
if ! "$src/tests/vm/run" --build "$build" --timeout 900 --out "$vmout" bench-stock >&2; then
	[ "$(wc -l < "$vmout/bench/counters.tsv" 2>/dev/null || echo 0)" -eq 9 ] ||
		{ echo "bench: VM run failed (logs: $vmout)" >&2; exit 1; }
	echo "bench: the VM run reported a failure after the timed runs (see $vmout); tabulating them" >&2
fi

mkdir -p "$out"
stem=$out/$(date +%Y-%m-%d)
n=1
while [ -e "$stem.json" ]; do n=$((n + 1)); stem=$out/$(date +%Y-%m-%d)-$n; done
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$src" diff --quiet HEAD -- daemon handlers include 2>/dev/null || commit="$commit+dirty"
buildtype=$(meson introspect --buildoptions "$build" 2>/dev/null |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"))' 2>/dev/null || echo unknown)

python3 - "$vmout/bench" "$stem" "$commit" "$buildtype" "$command" <<'PY'
import datetime, json, os, sys

bench, stem, commit, buildtype, command = sys.argv[1:6]
targets = ["fileio", "tcmud", "tcmu-runner"]
daemons = ["tcmud", "tcmu-runner"]
jobs = ["randread-4k", "randread-128k", "randwrite-4k"]
meta = dict(line.strip().split("=", 1) for line in open(os.path.join(bench, "meta.env")) if "=" in line)
clk_tck = int(meta.get("clk_tck", 100))

def fio_result(path):
    text = open(path).read()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    side = job["write"] if job["write"]["total_ios"] else job["read"]
    return dict(iops=round(side["iops"]), mib_s=round(side["bw_bytes"] / 2**20, 1),
                fio_ios=side["total_ios"], lat_mean_us=round(side["lat_ns"]["mean"] / 1000, 1))

counters = {}
for line in open(os.path.join(bench, "counters.tsv")):
    target, job, cmds, vol, invol, ticks = line.split()
    counters[target, job] = (int(cmds), vol, invol, ticks)

results = {}
for target in targets:
    for job in jobs:
        r = fio_result(os.path.join(bench, f"{target}-{job}.json"))
        cmds, vol, invol, ticks = counters[target, job]
        r["commands"] = cmds
        if vol != "-" and cmds:
            r["ctxt_voluntary"], r["ctxt_nonvoluntary"], r["cpu_ticks"] = int(vol), int(invol), int(ticks)
            r["ctxt_per_cmd"] = round((int(vol) + int(invol)) / cmds, 3)
            r["cpu_us_per_cmd"] = round(int(ticks) * 1e6 / clk_tck / cmds, 1)
        results.setdefault(target, {})[job] = r

callgrind = {}
path = os.path.join(bench, "callgrind.tsv")
if os.path.exists(path):
    for line in open(path):
        target, cmds, ir = line.split()
        callgrind[target] = dict(commands=int(cmds), instructions=int(ir),
                                 instr_per_cmd=round(int(ir) / int(cmds)) if int(cmds) else None)

doc = dict(date=datetime.datetime.now().isoformat(timespec="seconds"), command=command,
           tcmud_commit=commit, tcmud_buildtype=buildtype, meta=meta,
           setup="256 MiB file on XFS (a loop device in the guest; write-back cache on every target), prefilled (1 MiB of random bytes repeated), exported through tcm_loop; "
                 "fio libaio direct=1 time_based ramp_time=2; fileio = LIO target_core_file; "
                 "tcmu-runner = Debian's qcow handler on the raw image; tcmud = user:file",
           commands_note="SCSI commands completed by the disk (/sys/block/sdX/stat) over the whole fio run "
                         "incl. ramp; 128k reads are 2 commands on TCMU LUNs (max_sectors_kb 64)",
           results=results, callgrind_4k_randread=callgrind)
json.dump(doc, open(stem + ".json", "w"), indent=1)

def cell(target, job, key):
    v = results[target][job].get(key)
    return "–" if v is None else f"{v:,}" if isinstance(v, int) else f"{v:,.1f}" if key != "ctxt_per_cmd" else f"{v:.2f}"

head = ["job"] + [f"{t} {u}" for t in targets for u in ("IOPS", "MiB/s")] + \
       [f"{d} ctxsw/cmd" for d in daemons] + [f"{d} CPU-µs/cmd" for d in daemons]
lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
for job in jobs:
    row = [job] + [cell(t, job, k) for t in targets for k in ("iops", "mib_s")] + \
          [cell(d, job, "ctxt_per_cmd") for d in daemons] + [cell(d, job, "cpu_us_per_cmd") for d in daemons]
    lines.append("| " + " | ".join(row) + " |")
if callgrind:
    lines += ["", "| callgrind, 4k randread qd16, 1 job | commands | instructions | instructions/cmd |",
              "|---|---|---|---|"]
    for d in daemons:
        c = callgrind.get(d)
        lines.append(f"| {d} | {c['commands']:,} | {c['instructions']:,} | {c['instr_per_cmd']:,} |" if c
                     else f"| {d} | – | – | not measured |")
else:
    lines += ["", "callgrind: not measured in this run."]
md = [f"# Benchmark {doc['date']}", "",
      f"`{command}` — tcmud {commit} ({buildtype}), guest kernel {meta.get('kernel')}, "
      f"{meta.get('guest_cpus')} vCPUs under TCG, {meta.get('fio')}, tcmu-runner {meta.get('tcmu_runner')}, "
      f"{meta.get('runtime_s')} s per job after 2 s ramp.", "", doc["setup"] + ".", "",
      "Commands: " + doc["commands_note"] + ".", ""] + lines
open(stem + ".md", "w").write("\n".join(md) + "\n")
print("\n".join(lines))
print(f"\nJSON: {stem}.json\nMarkdown: {stem}.md")
PY
