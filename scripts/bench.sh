#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark (not a test): in ONE VM boot (tests/vm/scenarios/bench-mq.sh),
# the same prefilled 256 MiB file on XFS, exported through tcm_loop, served by
#   stock modules:   LIO fileio, Debian's tcmu-runner, tcmud
#   patched modules: tcmud with nr_queues 1, 2, 4 (kmod/'s uio.ko and
#                    target_core_user.ko, swapped in half-way through the boot)
# each with every workload (4k randread, 4k randwrite, 128k randread; fio
# libaio, direct, iodepth 16 per job, time-based) x fio jobs 1, 2, 4.
# For each row: IOPS, MB/s, and what emulated time does not blur, for the
# daemons: context switches and CPU time per SCSI command; then instructions
# per command under valgrind's callgrind for tcmu-runner and each tcmud.
#
#   scripts/bench.sh [--build DIR] [--kmod DIR | --no-kmod] [--smp N] [--mem MB]
#                    [--runtime S] [--ramp S] [--jobs "1 2 4"] [--queues "1 2 4"]
#                    [--workloads "randread-4k randwrite-4k randread-128k"]
#                    [--iodepth N] [--callgrind-ios N] [--callgrind-jobs N]
#                    [--no-callgrind] [--quick] [--out DIR] [--timeout S]
#                    [--revision REV] [--rbd] [--medium loop|virtio] [--icount N] [--fixed]
#                    [--pairs N]
#   scripts/bench.sh --insn [--build DIR] [--insn-reps N] [--no-profile] [--out DIR] [--rbd]
#                    [--medium loop|virtio]
#
# --build   meson build directory with daemon/core/tcmud (default: build)
# --kmod    patched modules (default: kmod/build.sh into <build>/kmod-patched);
#           --no-kmod runs the stock half only
# --smp     guest vCPUs (default 2). On a 2-core host more vCPUs than host
#           cores mostly adds noise: the vCPU threads then share cores.
# --runtime/--ramp  seconds per fio run (default 5 after a 1 s ramp)
# --quick   smoke mode: one job, 1 s, no ramp, 50 callgrind reads per job
# --out     where <date>-mq.{json,md,png} go (default: bench-results)
# --rbd     rbd rows too, in the same boot: a one-node Ceph (memstore) on
#           the host (scripts/ceph-testbed.sh), one image served by Debian's
#           tcmu-runner rbd handler and by tcmud (stock, then nr_queues N on
#           the patched modules), librbd cache off; and `rbd bench` on the
#           host at the 2-job fio depth, librbd's own ceiling
# --medium  what the XFS holding the file sits on: loop (default), a loop
#           device over guest tmpfs; virtio, a virtio-blk disk (tests/vm/run
#           --disk), where an O_DIRECT read is QEMU's, like a disk's DMA
# --icount  guest time from guest instructions (tests/vm/run --icount N: QEMU
#           -icount shift=N,sleep=on, 2^N ns each; N=4 is what the notes use):
#           IOPS then follow the work per command, not the host's load, and
#           repeat between rows and boots; but all vCPUs run on one host
#           thread and their instructions add up in guest time, so more
#           vCPUs or queues cannot show parallel speed-up, only less work
#           per command. Idle time still passes in host time. Timed mode only.
# --fixed   the patched rows with data_area_fixed=1 (kmod patch 0009; 32 MiB
#           data area per queue), registered by tcmud as io_uring fixed
#           buffers: the set-up the instruction-count goals are met on.
#           Timed mode only.
# --pairs N then, on the patched modules, fileio and tcmud-1q (with
#           --fixed's data area if given) served side by side and each
#           workload x jobs value run N times on each, alternating, the
#           order swapped every pair (ABBA): the report's "Paired runs"
#           gives each pair's tcmud-1q / fileio IOPS ratio, their median
#           and range. For a ratio goal this beats two rows minutes apart.
#           Timed mode only, with the patched half.
# --revision  the tcmud revision to record when the build's source tree is
#           not a git checkout (default: git rev-parse there, +dirty if changed)
# Prints the markdown; fio JSON and daemon logs stay in <build>/vm-out/bench-mq/.
#
# --insn    instead: one boot under the guest-instruction counter
#           (tests/vm/scenarios/bench-insn.sh): user, kernel and total
#           instructions per command and per I/O for fileio, tcmu-runner,
#           tcmud (stock modules) and a ublk server, 4k and 128k randread;
#           writes <date>-insn.{json,md,png}. --insn-reps N repetitions
#           (default 3); --no-profile leaves out the per-TB kernel profile
#           (tests/bench/insncount/insn-profile.py). With --kmod DIR also
#           tcmud on kmod/'s modules (nr_queues 1). With --rbd the rbd rows
#           instead (Ceph memstore test bed): tcmu-runner-rbd, tcmud-rbd
#           and with --kmod tcmud-rbd-Nq (--queues), 4k randread and
#           randwrite and 128k randread, 2 fio jobs. BENCH_INSN_* variables
#           in the environment are handed to the guest (docs/benchmarks.md).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
command="scripts/bench.sh $*"
build=$src/build out=$src/bench-results kmod="" use_kmod=1 smp=2 mem=2048 timeout=2400
runtime=5 ramp=1 jobs="1 2 4" queues="1 2 4" workloads="randread-4k randwrite-4k randread-128k"
iodepth=16 callgrind=1 callgrind_ios=200 callgrind_jobs=2 commit="" rbd=0
insn=0 insn_reps=3 insn_profile=1 medium=loop icount="" kmod_fixed=0 pairs=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(realpath "$2"); shift 2 ;;
	--kmod) kmod=$(realpath "$2"); shift 2 ;;
	--no-kmod) use_kmod=0; shift ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--revision) commit=$2; shift 2 ;;
	--rbd) rbd=1; shift ;;
	--medium) medium=$2; shift 2 ;;
	--icount) icount=$2; shift 2 ;;
	--fixed) kmod_fixed=1; shift ;;
	--pairs) pairs=$2; shift 2 ;;
	--runtime) runtime=$2; shift 2 ;;
	--ramp) ramp=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--queues) queues=$2; shift 2 ;;
	--workloads) workloads=$2; shift 2 ;;
	--iodepth) iodepth=$2; shift 2 ;;
	--callgrind-ios) callgrind_ios=$2; shift 2 ;;
	--callgrind-jobs) callgrind_jobs=$2; shift 2 ;;
	--no-callgrind) callgrind=0; shift ;;
	--insn) insn=1; shift ;;
	--insn-reps) insn_reps=$2; shift 2 ;;
	--no-profile) insn_profile=0; shift ;;
	--quick) jobs=1 runtime=1 ramp=0 callgrind_ios=50; shift ;;
	-h|--help) sed -n "2,69p" "$0"; exit 0 ;;
	*) echo "bench: unknown argument $1" >&2; exit 2 ;;
	esac
done
disk_args=()
case $medium in
loop) ;;
virtio) disk_args=(--disk 512) ;;
*) echo "bench: --medium is loop or virtio" >&2; exit 2 ;;
esac
# bench_insn: the --insn boot and its report (scripts/bench-insn-report.py).
bench_insn() {
	local vmout=$build/vm-out/bench-insn stem n load_start load_end start wall bench_commit tree
	local so=$build/tests/bench/insncount/libinsncount.so
	if [ ! -f "$so" ]; then
		"$src/tests/bench/insncount/fetch-qemu-header.sh" >/dev/null
		meson setup --reconfigure "$build" >/dev/null
		ninja -C "$build" tests/bench/insncount/libinsncount.so >&2
	fi
	[ -f "$build/build.ninja" ] && ninja -C "$build" tests/bench/insncount/insnmark \
		tests/bench/ublk_file_server >&2
	trap 'rm -f "$build/bench.env"' EXIT
	printf 'BENCH_INSN_REPS=%s\nBENCH_MEDIUM=%s\n' "$insn_reps" "$medium" > "$build/bench.env"
	local ceph=()
	if [ $rbd = 1 ]; then
		ceph=(--ceph memstore)
		printf '%s\n' 'BENCH_INSN_BACKENDS="tcmu-runner-rbd tcmud-rbd"' \
			'BENCH_INSN_WORKLOADS="randread-4k randwrite-4k randread-128k"' \
			BENCH_INSN_JOBS=2 BENCH_INSN_IOS_4K=1000 BENCH_INSN_IOS_128K=250 \
			"BENCH_INSN_QUEUES=\"$queues\"" >> "$build/bench.env"
	fi
	# The caller's own settings win (the guest reads the file in order).
	env | grep '^BENCH_INSN_' | sed 's/=\(.*\)/="\1"/' >> "$build/bench.env" || true
	bench_commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
	load_start=$(uptime) start=$(date +%s)
	"$src/tests/vm/run" --build "$build" --smp "$smp" --mem "$mem" --timeout "$timeout" \
		${kmod:+--kmod "$kmod"} "${ceph[@]}" "${disk_args[@]}" --out "$vmout" "$([ $insn_profile = 1 ] && echo --insn-profile || echo --insn)" bench-insn >&2 ||
		[ -s "$vmout/bench-insn/intervals.tsv" ] || { echo "bench: VM run failed (logs: $vmout)" >&2; exit 1; }
	wall=$(($(date +%s) - start)) load_end=$(uptime)
	tree=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
		"$build/meson-info/meson-info.json" 2>/dev/null || echo "$src")
	[ -n "$commit" ] || commit=$(git -C "$tree" rev-parse --short HEAD 2>/dev/null || echo unknown)
	mkdir -p "$out"
	stem=$out/$(date +%Y-%m-%d)-insn n=1
	while [ -e "$stem.json" ]; do n=$((n + 1)); stem=$out/$(date +%Y-%m-%d)-insn-$n; done
	python3 "$src/scripts/bench-insn-report.py" --vmout "$vmout" --stem "$stem" --commit "$commit" \
		--bench-commit "$bench_commit" --command "$command" --host-load-start "$load_start" \
		--host-load-end "$load_end" --wall-s "$wall"
	[ $insn_profile = 0 ] || echo "profile: tests/bench/insncount/insn-profile.py $vmout tcmud.randread-4k.r1.from tcmud.randread-4k.r1.to"
}

[ -f "$build/build.ninja" ] && ninja -C "$build" daemon/core/tcmud >&2
[ -x "$build/daemon/core/tcmud" ] ||
	{ echo "bench: no $build/daemon/core/tcmud (meson setup $build && ninja -C $build)" >&2; exit 2; }
if [ $kmod_fixed = 1 ] && { [ $insn = 1 ] || [ $use_kmod = 0 ]; }; then
	echo "bench: --fixed is for the timed mode's patched rows (not --insn, not --no-kmod)" >&2; exit 2
fi
case $pairs in
''|*[!0-9]*) echo "bench: --pairs takes a count" >&2; exit 2 ;;
esac
if [ "$pairs" -gt 0 ] && { [ $insn = 1 ] || [ $use_kmod = 0 ]; }; then
	echo "bench: --pairs is for the timed mode's patched half (not --insn, not --no-kmod)" >&2; exit 2
fi
if [ $insn = 1 ] && [ -n "$icount" ]; then
	echo "bench: --icount is for the timed mode (--insn counts instructions already)" >&2; exit 2
fi
[ $insn = 0 ] || { bench_insn; exit; }
kmod_args=()
[ $rbd = 0 ] || kmod_args+=(--ceph memstore)
if [ $use_kmod = 1 ]; then
	if [ -z "$kmod" ]; then
		kmod=$build/kmod-patched
		"$src/kmod/build.sh" "$kmod" >&2
	fi
	kmod_args+=(--kmod "$kmod")
fi

# The scenario's parameters, for this run only.
trap 'rm -f "$build/bench.env"' EXIT
cat > "$build/bench.env" <<ENV
BENCH_RUNTIME=$runtime
BENCH_RAMP=$ramp
BENCH_JOBS="$jobs"
BENCH_QUEUES="$queues"
BENCH_WORKLOADS="$workloads"
BENCH_IODEPTH=$iodepth
BENCH_CALLGRIND=$callgrind
BENCH_CALLGRIND_IOS=$callgrind_ios
BENCH_CALLGRIND_JOBS=$callgrind_jobs
BENCH_RBD=$rbd
BENCH_MEDIUM=$medium
BENCH_KMOD_FIXED=$kmod_fixed
BENCH_PAIRS=$pairs
ENV
vmout=$build/vm-out/bench-mq
# The scenario's revision, taken before the boot: others may commit during it.
bench_commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
load_start=$(uptime)
start=$(date +%s)
# The verdict also fails the run on kernel warnings such as a hung task
# (a daemon under valgrind that never answered); the timed figures are still
# tabulated as long as the scenario wrote them.
if ! "$src/tests/vm/run" --build "$build" "${kmod_args[@]}" "${disk_args[@]}" --smp "$smp" --mem "$mem" \
	${icount:+--icount "$icount"} --timeout "$timeout" --out "$vmout" bench-mq >&2; then
	[ -s "$vmout/bench/counters.tsv" ] || { echo "bench: VM run failed (logs: $vmout)" >&2; exit 1; }
	echo "bench: the VM run reported a failure (see $vmout); tabulating what it measured" >&2
fi
wall=$(($(date +%s) - start))
load_end=$(uptime)

mkdir -p "$out"
stem=$out/$(date +%Y-%m-%d)-mq${icount:+-icount}
n=1
while [ -e "$stem.json" ]; do n=$((n + 1)); stem=$out/$(date +%Y-%m-%d)-mq${icount:+-icount}-$n; done
# The daemon's revision is its build's source tree's (--revision for a tree
# exported without git); the scenario's is this checkout's.
tree=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
	"$build/meson-info/meson-info.json" 2>/dev/null || echo "$src")
if [ -z "$commit" ]; then
	commit=$(git -C "$tree" rev-parse --short HEAD 2>/dev/null || echo unknown)
	git -C "$tree" diff --quiet HEAD -- daemon handlers include kmod 2>/dev/null || commit="$commit+dirty"
fi
buildtype=$(meson introspect --buildoptions "$build" 2>/dev/null |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"))' 2>/dev/null || echo unknown)
python3 "$src/scripts/bench-report.py" --bench "$vmout/bench" --stem "$stem" \
	--commit "$commit" --bench-commit "$bench_commit" --buildtype "$buildtype" --command "$command" --smp "$smp" --icount "$icount" \
	--host-load-start "$load_start" --host-load-end "$load_end" --wall-s "$wall"
