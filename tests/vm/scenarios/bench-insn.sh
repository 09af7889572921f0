# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark, not a test (in no suite list; run by scripts/bench.sh --insn):
# guest instructions per command, counted by the insncount plugin
# (tests/vm/run --insn), for each back end serving the same prefilled
# 256 MiB file on XFS, in this one boot, one after another:
#   fileio       LIO's in-kernel backstore, through tcm_loop (fd_buffered_io=1:
#                page-cache reads and writes, no O_DSYNC)
#   fileio-direct  the same with fd_async_io=1 (IOCB_DIRECT: the back end's
#                I/O straight between the file and the command's pages);
#                only when named in BENCH_INSN_BACKENDS
#   tcmu-runner  Debian's, qcow handler on the raw image, through tcm_loop
#   tcmud        user:file, through tcm_loop (stock modules)
#   ublk         tests/bench/ublk_file_server, /dev/ublkbN (no SCSI at all)
# and with --kmod (after the stock modules are swapped for kmod/'s):
#   tcmud-<N>q   tcmud on a device with nr_queues=N, N in BENCH_INSN_QUEUES
#                (default 1: with one fio job one CPU submits, so one queue
#                works whatever N is); with BENCH_INSN_TCMUD_BEFORE the
#                same rows served by that binary first (<its label>-<N>q)
# With the Ceph test bed (tests/vm/run --ceph memstore) and these in
# BENCH_INSN_BACKENDS, one prefilled 256 MiB rbd image (librbd cache off):
#   tcmu-runner-rbd  Debian's tcmu-runner, rbd handler
#   tcmud-rbd        tcmud, user:rbd (stock modules; tcmud-before-rbd with
#                    BENCH_INSN_TCMUD_BEFORE, as for tcmud)
#   tcmud-rbd-<N>q   with --kmod, nr_queues=N for N in BENCH_INSN_QUEUES
#                    (these replace the tcmud-<N>q file rows unless tcmud
#                    is in BENCH_INSN_BACKENDS too)
# BENCH_INSN_RBD_VARIANTS="LABEL:ITEMS ...": after tcmud-rbd, one row
# tcmud-rbd-LABEL each, tcmud serving the image as ITEMS say (comma-
# separated; bench-rbd.sh, bench_rbd_variant_env): --options in CEPH_ARGS,
# +key=value in the device's conf, NAME=VALUE in tcmud's environment
# ("nb:+rbd_non_blocking_aio=true", "trim:GLIBC_TUNABLES=glibc.malloc.
# trim_threshold=67108864"), settings judged before they go into the code.
# For the rbd rows the daemon's CPU ticks by thread name (its own threads
# against librados'/librbd's) go to threads.tsv (label workload rep name
# threads ticks), per counted run.
# and with BENCH_INSN_KMODS="LABEL=DIR ..." (kmod/build.sh outputs, e.g. one
# per prefix of the series), for each in turn after swapping its modules in:
#   LABEL        tcmud on a device with nr_queues=1 (kallsyms-LABEL.txt)
# so that patches are compared in one boot. BENCH_INSN_BACKENDS (default
# "fileio tcmu-runner tcmud ublk") picks the stock-module rows;
# BENCH_INSN_JOBS (default 1) is fio's numjobs (number_ios is per job).
# BENCH_INSN_TCMUD_BEFORE=PATH (in the build directory): with the tcmud row,
# a "tcmud-before" row served by that binary right before tcmud's, so a
# daemon change is judged before/after in one boot
# (BENCH_INSN_TCMUD_BEFORE_LABEL names that row otherwise).
# BENCH_INSN_TCMUD_VARIANTS="LABEL=PATH[,VAR=VALUE...] ..." (paths in the
# build directory): one more row per binary, after tcmud-before and before
# tcmud, e.g. an LTO build of the same sources; VAR=VALUE pairs are in that
# daemon's environment only.
# BENCH_INSN_TCMUD_DIRECT (default "0"): the file backstore's direct= values
# for every tcmud file row (stock, --kmod, BENCH_INSN_KMODS); "0 1" serves
# each twice, the direct=1 (O_DIRECT) row labelled LABEL-direct.
# BENCH_INSN_KMOD_FIXED (default "0"): attrib/data_area_fixed values for the
# --kmod tcmud file rows and the BENCH_INSN_KMODS rows (kmod patch 0009,
# which every variant must then have); "0 1" serves each twice, the
# fixed row labelled LABEL-fixed, with max_data_area_mb
# BENCH_INSN_FIXED_MB (default 16: the whole area is allocated at enable
# and tcmud registers it as io_uring fixed buffers).
# BENCH_INSN_KMOD_ZC (default "0"): attrib/zero_copy values for the same
# rows (kmod patch 0013, which every variant must then have); "0 1" serves
# each twice, the zero-copy row labelled LABEL-zc (after -fixed), with
# max_data_area_mb BENCH_INSN_FIXED_MB too (16: the window is as large as
# the data area, and 16 x 128 KiB in flight need 2 MiB).
# BENCH_MEDIUM (mount_bench_xfs): what the XFS holding the file sits on,
# "loop" (a loop device over guest tmpfs, default) or "virtio" (the disk of
# tests/vm/run --disk; scripts/bench.sh --medium virtio).
# For each back end, workload (BENCH_INSN_WORKLOADS) and repetition
# (BENCH_INSN_REPS), fio reads a fixed number of I/Os (BENCH_INSN_IOS_4K,
# BENCH_INSN_IOS_128K) and marks the plugin's counters from its
# --exec_prerun and --exec_postrun, so the interval is fio's I/O loop.
# BENCH_INSN_LONG_X=K (default 1): each even repetition reads K times as
# many I/Os, so that the report can take the marginal cost of a command,
# (long - short) / extra commands, free of what a run costs besides its
# commands (fio's start-up and exit, the daemon's first wake-up: 0-4 M
# instructions at 1 job, 20-30 M at 2 jobs, where the other job's start
# and end fall inside the marks).
# Commands come from /sys/block/<disk>/stat. Marks taken back to back the
# same way (the "null" interval) measure what a mark pair itself costs.
# Leaves in /vm-out/bench-insn/: intervals.tsv (label workload rep from to
# commands ios ticks), meta.env; /vm-out/kallsyms.txt for the profile
# (kallsyms-patched.txt for the patched rows: the modules moved).
# ticks: local timer interrupts on all CPUs during the fio run. A tick costs
# the guest instructions, and ticks per I/O grow when the host is loaded (the
# guest's clock is the host's): the figure that says how much of a spread
# between repetitions that explains.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-rbd.sh"
[ "${TCMUD_INSN:-0}" != 0 ] || { echo "SKIP: needs tests/vm/run --insn (the instruction counter)"; exit 77; }
reps=${BENCH_INSN_REPS:-3}
long_x=${BENCH_INSN_LONG_X:-1}
[[ $long_x =~ ^[1-9][0-9]*$ ]] || fail "BENCH_INSN_LONG_X: a whole number from 1, not $long_x"
tcmud_direct=${BENCH_INSN_TCMUD_DIRECT:-0}
for d in $tcmud_direct; do
	[[ $d == [01] ]] || fail "BENCH_INSN_TCMUD_DIRECT: 0 and/or 1, not $d"
done
kmod_fixed=${BENCH_INSN_KMOD_FIXED:-0}
for f in $kmod_fixed; do
	[[ $f == [01] ]] || fail "BENCH_INSN_KMOD_FIXED: 0 and/or 1, not $f"
done
kmod_zc=${BENCH_INSN_KMOD_ZC:-0}
for z in $kmod_zc; do
	[[ $z == [01] ]] || fail "BENCH_INSN_KMOD_ZC: 0 and/or 1, not $z"
done
jobs=${BENCH_INSN_JOBS:-1}
backends=" ${BENCH_INSN_BACKENDS:-fileio tcmu-runner tcmud ublk} "
workloads=${BENCH_INSN_WORKLOADS:-randread-4k randread-128k}
out=$TCMUD_VM_OUT/bench-insn
mkdir -p "$out" /tmp/insn
: > "$out/intervals.tsv"
: > "$out/threads.tsv"
: > "$out/zero-copy.tsv"
: > "$out/rounds.tsv"
# The daemon whose threads insn_fio profiles (rbd rows); empty: none.
INSN_PID=""
has() { [[ $backends == *" $1 "* ]]; }
rbd_rows=0
if has tcmu-runner-rbd || has tcmud-rbd || has rbd-bench; then
	need_ceph
	rbd_rows=1
fi
# The kmod/ half serves the file unless only rbd rows were asked for.
kmod_file=1
if ! has tcmud && has tcmud-rbd; then kmod_file=0; fi
file_rows=0
for b in fileio fileio-direct tcmu-runner tcmud ublk; do has $b && file_rows=1; done
[ -z "${TCMUD_KMOD:-}" ] || [ $kmod_file = 0 ] || file_rows=1
[ -z "${BENCH_INSN_KMODS:-}" ] || file_rows=1
# The mark helper runs from guest tmpfs, so a mark costs the same every time.
cp "$TCMUD_BUILD/tests/bench/insncount/insnmark" /tmp/insn/
# It logs each acknowledged mark to guest tmpfs: the guest's 9p view of the
# plugin's counts.txt is cached and would not show new lines.
: > /tmp/insn/marks.log
markcmd="/tmp/insn/insnmark -p 20 -l /tmp/insn/marks.log $TCMUD_VM_OUT/marks"
# fio runs --exec_prerun/--exec_postrun once per job: with several jobs, a
# gate lets the first job's prerun and the last job's postrun mark, so the
# interval runs from the first job's start to the last job's end.
if [ "$jobs" != 1 ]; then
	cat > /tmp/insn/gate.sh <<GATE
#!/bin/sh
# gate.sh in|out NAME
exec 8> /tmp/insn/gate.lock
flock 8
n=\$(cat /tmp/insn/gate.n 2> /dev/null || echo 0)
case \$1 in
in) n=\$((n + 1)) ;;
*) n=\$((n - 1)) ;;
esac
echo \$n > /tmp/insn/gate.n
if { [ \$1 = in ] && [ \$n = 1 ]; } || { [ \$1 = out ] && [ \$n = 0 ]; }; then
	exec $markcmd \$2 20000
fi
GATE
	chmod +x /tmp/insn/gate.sh
fi

ios_of() {
	case $1 in
	*-4k) echo "${BENCH_INSN_IOS_4K:-4000}" ;;
	*-128k) echo "${BENCH_INSN_IOS_128K:-1000}" ;;
	*) fail "no I/O count for $1" ;;
	esac
}

# Local timer interrupts so far, all CPUs.
loc_total() { awk '/^ *LOC:/ {for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i} END {print s + 0}' /proc/interrupts; }

# tcmud_metrics FILE: tcmud's per-queue counters now (tcmudctl metrics), or an
# empty FILE where no tcmud answers (the fileio, tcmu-runner, ublk rows).
tcmud_metrics() { "$TCMUDCTL" metrics > "$1" 2>/dev/null || : > "$1"; }

# rounds_delta LABEL WORKLOAD REP BEFORE AFTER: a rounds.tsv line (label
# workload rep doorbells commands queues-used) from two tcmud_metrics files:
# how many completion batches (doorbell writes) the fio run's commands took,
# and over how many queues they went. Nothing where no tcmud answered.
rounds_delta() {
	awk -v row="$1	$2	$3" '
		$1 ~ /^tcmud_(doorbells|commands)_total[{]/ {
			if (FILENAME == ARGV[1]) before[$1] = $2; else delta[$1] = $2 - before[$1]
		}
		END {
			for (k in delta) {
				if (k ~ /^tcmud_doorbells/) d += delta[k]
				else { c += delta[k]; if (delta[k] > 0) q++ }
			}
			if (length(delta)) printf "%s\t%d\t%d\t%d\n", row, d, c, q
		}' "$4" "$5"
}

# insn_fio LABEL WORKLOAD REP DEV: one counted fio run.
insn_fio() {
	local label=$1 workload=$2 rep=$3 dev=$4 ios c0 c1 t0 t1 args from to
	read -ra args < <(bench_workload_args "$workload")
	ios=$(ios_of "$workload")
	[ $((rep % 2)) = 1 ] || ios=$((ios * long_x))
	from=$label.$workload.r$rep.from to=$label.$workload.r$rep.to
	[ -z "$INSN_PID" ] || thread_ticks "$INSN_PID" > /tmp/insn/threads.0
	tcmud_metrics /tmp/insn/metrics.0
	t0=$(loc_total)
	c0=$(disk_commands "$dev")
	local pre="$markcmd $from 20000" post="$markcmd $to 20000"
	if [ "$jobs" != 1 ]; then
		echo 0 > /tmp/insn/gate.n
		pre="/tmp/insn/gate.sh in $from" post="/tmp/insn/gate.sh out $to"
	fi
	fio --name="$workload" --filename="$dev" --direct=1 --ioengine=libaio \
		--iodepth=16 --numjobs="$jobs" --group_reporting --number_ios="$ios" --size=256M "${args[@]}" \
		--exec_prerun="$pre" --exec_postrun="$post" \
		--output-format=json > "$out/$label-$workload-r$rep.json" || fail "$label $workload: fio"
	c1=$(disk_commands "$dev")
	t1=$(loc_total)
	tcmud_metrics /tmp/insn/metrics.1
	rounds_delta "$label" "$workload" "$rep" /tmp/insn/metrics.0 /tmp/insn/metrics.1 \
		>> "$out/rounds.tsv"
	if [ -n "$INSN_PID" ]; then
		thread_ticks "$INSN_PID" > /tmp/insn/threads.1
		threads_delta "$label	$workload	$rep" /tmp/insn/threads.0 /tmp/insn/threads.1 \
			>> "$out/threads.tsv"
	fi
	if ! grep -q "^$from " /tmp/insn/marks.log || ! grep -q "^$to " /tmp/insn/marks.log; then
		fail "$label $workload: mark $from or $to not acknowledged"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$workload" "$rep" "$from" "$to" \
		$((c1 - c0)) $((ios * jobs)) $((t1 - t0)) >> "$out/intervals.tsv"
	log "$label $workload rep $rep: $((c1 - c0)) commands for $((ios * jobs)) I/Os"
}

# insn_null REP: two marks back to back through sh -c, as fio's exec does.
insn_null() {
	local t0 t1
	t0=$(loc_total)
	sh -c "$markcmd null.r$1.from 20000" || fail "mark null.r$1.from not acknowledged"
	sh -c "$markcmd null.r$1.to 20000" || fail "mark null.r$1.to not acknowledged"
	t1=$(loc_total)
	printf 'null\t-\t%s\tnull.r%s.from\tnull.r%s.to\t0\t0\t%s\n' "$1" "$1" "$1" $((t1 - t0)) \
		>> "$out/intervals.tsv"
}

# insn_run LABEL DEV: every workload, every repetition, interleaved
# (workload inside repetition) so drift shows as spread; with
# BENCH_INSN_AFFINITY, once per value (below).
insn_run() {
	local v param
	if [ -z "$affinity" ] || [[ $2 != /dev/sd* ]]; then
		insn_run_once "$@"
		return
	fi
	# Only one loopback WWN exists at a time (every row removes its own).
	param=$(echo "$TARGET"/loopback/naa.*/param/cmd_completion_affinity)
	[ -f "$param" ] || fail "$1: no cmd_completion_affinity under $TARGET/loopback"
	for v in $affinity; do
		echo "$v" > "$param"
		insn_run_once "$(affinity_label "$1" "$v")" "$2"
	done
	echo -1 > "$param"
}

# BENCH_INSN_AFFINITY (default empty: the fabric's default, -1): values for
# the tcm_loop WWN's param/cmd_completion_affinity, each row counted once per
# value. -1 completes a command on the CPU that submitted it (the target
# core's default: from the daemon's CPU that wakes a worker on fio's); -2 on
# the CPU that completes it (a user backstore: the daemon's); N on CPU N.
# Rows with a value other than -1 are labelled LABEL-ca<value>.
affinity=${BENCH_INSN_AFFINITY:-}
for v in $affinity; do
	[[ $v =~ ^(-1|-2|[0-9]+)$ ]] || fail "BENCH_INSN_AFFINITY: -1, -2 or a CPU, not $v"
done
affinity_label() { if [ "$2" = -1 ]; then echo "$1"; else echo "$1-ca$2"; fi; }

insn_run_once() {
	local rep workload
	# Every file row starts alike: nothing dirty for the flusher to write
	# during a counted run, and the whole file in the page cache again (an
	# earlier row's O_DIRECT writes invalidate the pages they cover). The
	# rbd rows have no file.
	sync
	[ ! -f "$img" ] || cat "$img" > /dev/null
	echo none > "/sys/block/$(basename "$2")/queue/scheduler" 2>/dev/null || true
	log "$1: $2 max_sectors_kb $(cat "/sys/block/$(basename "$2")/queue/max_sectors_kb")"
	# warm the page cache and the paths once, uncounted
	fio --name=warm --filename="$2" --direct=1 --ioengine=libaio --iodepth=16 --rw=read \
		--bs=1M --size=64M --output-format=terse > /dev/null || fail "$1: warm-up read"
	for rep in $(seq "$reps"); do
		for workload in $workloads; do
			insn_fio "$1" "$workload" "$rep" "$2"
		done
	done
}

kmod=${TCMUD_KMOD:-}
TCMUD_KMOD="" load_target_stack
img=/mnt/bench/bench.img size=$((256 << 20))
if [ $file_rows = 1 ]; then
	mount_bench_xfs
	python3 -c 'import os, sys
block = os.urandom(1 << 20)
with open(sys.argv[1], "wb") as f:
    for _ in range(256): f.write(block)' $img
	# Written back now, not by the flusher during a counted run (seen: one
	# fileio interval with 114 MB of extra copies, 30 s after the prefill).
	sync
fi
# The rbd rows' image, prefilled on the host.
[ $rbd_rows = 0 ] || bench_rbd_image
{
	echo "kernel=$(uname -r)"
	echo "guest_cpus=$(nproc)"
	echo "fio=$(fio --version)"
	echo "tcmu_runner=$(dpkg-query -W -f '${Version}' tcmu-runner)"
	echo "reps=$reps"
	echo "long_x=$long_x"
	echo "jobs=$jobs"
	echo "workloads=$workloads"
	echo "ios_4k=$(ios_of randread-4k)"
	echo "ios_128k=$(ios_of randread-128k)"
	echo "profile=$([ "$TCMUD_INSN" = 2 ] && echo on || echo off)"
	echo "medium=${BENCH_MEDIUM:-loop}"
	echo "tcmud_direct=$tcmud_direct"
	echo "affinity=${affinity:--1}"
} > "$out/meta.env"

for rep in $(seq "$reps"); do insn_null "$rep"; done

# fileio_row LABEL CONTROL: LIO fileio on the file, CONTROL added to its
# control string.
fileio_row() {
	insn_run "$1" "$(export_via_loop "$(create_fileio_backstore "insn-$1" "$img" "$size" ",fd_buffered_io=1$2")")"
	remove_all_targets
}
has fileio && fileio_row fileio ""
has fileio-direct && fileio_row fileio-direct ",fd_async_io=1"

if has tcmu-runner; then
	mkdir -p /etc/tcmu /var/log/tcmu
	tcmu-runner -l /var/log/tcmu &
	runner=$!
	stop_on_exit $runner
	bs=$(USER_BACKSTORE_ATTRS=emulate_write_cache=1 create_user_backstore insn-runner qcow $img $size)
	wait_uio_open $runner 30
	insn_run tcmu-runner "$(export_via_loop "$bs")"
	bench_stop_daemon $runner
fi

# file_cfg DIRECT: the file backstore's cfgstring; direct_label LABEL DIRECT.
file_cfg() { if [ "$1" = 1 ]; then echo "$img;direct=1"; else echo "$img"; fi; }
direct_label() { if [ "$2" = 1 ]; then echo "$1-direct"; else echo "$1"; fi; }

# tcmud_row LABEL BINARY: tcmud (stock modules) served by BINARY, a row per
# value of BENCH_INSN_TCMUD_DIRECT.
tcmud_row() {
	local bs d label
	TCMUD_BIN=$2 start_tcmud
	for d in $tcmud_direct; do
		label=$(direct_label "$1" "$d")
		bs=$(USER_BACKSTORE_ATTRS=emulate_write_cache=1 create_user_backstore "insn-$label" \
			file "$(file_cfg "$d")" $size)
		wait_uio_open "$TCMUD_PID" 30
		insn_run "$label" "$(export_via_loop "$bs")"
		remove_all_targets
	done
	bench_stop_daemon "$TCMUD_PID"
}

if has tcmud; then
	if [ -n "${BENCH_INSN_TCMUD_BEFORE:-}" ]; then
		[ -x "$TCMUD_BUILD/$BENCH_INSN_TCMUD_BEFORE" ] ||
			fail "no $TCMUD_BUILD/$BENCH_INSN_TCMUD_BEFORE"
		tcmud_row "${BENCH_INSN_TCMUD_BEFORE_LABEL:-tcmud-before}" \
			"$TCMUD_BUILD/$BENCH_INSN_TCMUD_BEFORE"
	fi
	for v in ${BENCH_INSN_TCMUD_VARIANTS:-}; do
		spec=${v#*=} vars=()
		bin=${spec%%,*}
		[ "$bin" = "$spec" ] || IFS=, read -ra vars <<< "${spec#*,}"
		[ -x "$TCMUD_BUILD/$bin" ] || fail "no $TCMUD_BUILD/$bin"
		for e in "${vars[@]}"; do export "${e?}"; done
		tcmud_row "${v%%=*}" "$TCMUD_BUILD/$bin"
		for e in "${vars[@]}"; do unset "${e%%=*}"; done
	done
	tcmud_row tcmud "$TCMUD_BUILD/daemon/core/tcmud"
fi

# rbd_row LABEL DAEMON [ATTRS]: the rbd image served by DAEMON (tcmu-runner
# or tcmud: $TCMUD_BIN if set), counted, its threads profiled.
rbd_row() {
	bench_rbd_serve "$2" "insn-$1" "${3:-}"
	INSN_PID=$BENCH_RBD_PID
	insn_run "$1" "$BENCH_RBD_DEV"
	INSN_PID=""
}

if has tcmu-runner-rbd; then
	rbd_row tcmu-runner-rbd tcmu-runner
	bench_stop_daemon "$BENCH_RBD_PID"
fi
if has tcmud-rbd; then
	need_tcmud_rbd
	if [ -n "${BENCH_INSN_TCMUD_BEFORE:-}" ]; then
		[ -x "$TCMUD_BUILD/$BENCH_INSN_TCMUD_BEFORE" ] ||
			fail "no $TCMUD_BUILD/$BENCH_INSN_TCMUD_BEFORE"
		TCMUD_BIN=$TCMUD_BUILD/$BENCH_INSN_TCMUD_BEFORE rbd_row \
			"${BENCH_INSN_TCMUD_BEFORE_LABEL:-tcmud-before}-rbd" tcmud
		bench_stop_daemon "$BENCH_RBD_PID"
	fi
	rbd_row tcmud-rbd tcmud
	bench_stop_daemon "$BENCH_RBD_PID"
	for variant in ${BENCH_INSN_RBD_VARIANTS:-}; do
		TCMUD_ENV=$(bench_rbd_variant_env "${variant#*:}") \
			BENCH_RBD_CONF=$(bench_rbd_variant_conf "${variant#*:}") \
			rbd_row "tcmud-rbd-${variant%%:*}" tcmud
		bench_stop_daemon "$BENCH_RBD_PID"
	done
fi

# rbd-bench: librbd's own cost per op in this guest, `rbd bench` (random,
# cache off, the workload's io size, io-threads = the fio rows' depth),
# counted like them, each workload and repetition twice: rbd-bench-1x with
# as many ops as the fio rows' I/Os, rbd-bench-2x with twice as many. The
# difference leaves out the process's start-up (libraries, connect, open):
# (total of 2x - total of 1x) / ops is the marginal cost of one op, the
# ceiling's counterpart of a daemon's instructions per command.
insn_rbd_bench() {
	local label=$1 workload=$2 rep=$3 ops=$4 args from to t0 t1
	case $workload in
	randread-4k) args="--io-type read --io-size 4K" ;;
	randwrite-4k) args="--io-type write --io-size 4K" ;;
	randread-128k) args="--io-type read --io-size 128K" ;;
	*) fail "rbd-bench: no workload $workload" ;;
	esac
	from=$label.$workload.r$rep.from to=$label.$workload.r$rep.to
	t0=$(loc_total)
	sh -c "$markcmd $from 20000" || fail "mark $from not acknowledged"
	# shellcheck disable=SC2086 # words on purpose
	rbd bench --rbd-cache=false --io-pattern rand $args --io-threads $((16 * jobs)) \
		--io-total $((ops * $(numfmt --from=iec "${args##* }"))) "$TCMUD_CEPH_POOL/$BENCH_RBD_IMAGE" \
		> "$out/$label-$workload-r$rep.txt" || fail "$label $workload: rbd bench"
	sh -c "$markcmd $to 20000" || fail "mark $to not acknowledged"
	t1=$(loc_total)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$workload" "$rep" "$from" "$to" \
		"$ops" "$ops" $((t1 - t0)) >> "$out/intervals.tsv"
	log "$label $workload rep $rep: $ops ops, $(grep 'ops/sec' "$out/$label-$workload-r$rep.txt" | tail -1)"
}
if has rbd-bench; then
	for rep in $(seq "$reps"); do
		for workload in $workloads; do
			n=$(($(ios_of "$workload") * jobs))
			insn_rbd_bench rbd-bench-1x "$workload" "$rep" "$n"
			insn_rbd_bench rbd-bench-2x "$workload" "$rep" $((2 * n))
		done
	done
fi

# ublk: the same file through a block driver whose server is a process, no
# SCSI and no TCMU ring (issue 16's "why not a real block driver" row).
if ! has ublk; then
	:
elif modprobe ublk_drv 2>/dev/null && [ -x "$TCMUD_BUILD/tests/bench/ublk_file_server" ]; then
	"$TCMUD_BUILD/tests/bench/ublk_file_server" -d 64 -m 512 "$img" > /tmp/ublk.out 2> "$out/ublk.log" &
	ublk=$!
	stop_on_exit $ublk
	for _ in $(seq "$(scaled 150)"); do
		[ -s /tmp/ublk.out ] && break
		kill -0 $ublk 2>/dev/null || { cat "$out/ublk.log"; fail "ublk_file_server exited"; }
		sleep 0.2
	done
	ublkdev=$(cat /tmp/ublk.out)
	[ -b "$ublkdev" ] || fail "ublk_file_server: no block device ($ublkdev)"
	# It serves the file's data, not merely some data.
	cmp -n $((8 << 20)) "$ublkdev" "$img" || fail "$ublkdev differs from $img"
	insn_run ublk "$ublkdev"
	kill $ublk
	wait $ublk || fail "ublk_file_server did not stop cleanly: $(cat "$out/ublk.log")"
	[ ! -e "$ublkdev" ] || fail "$ublkdev still there after the server stopped"
else
	log "no ublk row: ublk_drv or tests/bench/ublk_file_server missing"
fi
# After every module is loaded: the profile's symbols (module text included).
cat /proc/kallsyms > "$TCMUD_VM_OUT/kallsyms.txt"

# zc_cmds ROW BACKSTORE_DIR: with attrib/zero_copy_cmds (kmod 0013), how
# many commands of the row took the zero-copy window, in zero-copy.tsv
# (label commands); a -zc row whose count is 0 measured nothing.
zc_cmds() {
	[ -e "$2/attrib/zero_copy_cmds" ] || return 0
	local n
	n=$(cat "$2/attrib/zero_copy_cmds")
	printf '%s\t%s\n' "$1" "$n" >> "$out/zero-copy.tsv"
	log "$1: $n commands through the zero-copy window"
	[[ $1 != *-zc ]] || [ "$n" -gt 0 ] || ! grep -q 128k <<<"$workloads" ||
		fail "$1: no command took the zero-copy window"
}

# kmod_file_rows PREFIX BINARY [QUEUES]: tcmud file rows on the patched
# modules loaded now, served by BINARY: for each queue count in QUEUES a set
# labelled PREFIX-<N>q..., or without QUEUES one set labelled PREFIX...
# with the device's default nr_queues.
kmod_file_rows() {
	local nq d f z label ctl attrs bs
	TCMUD_BIN=$2 start_tcmud
	for nq in ${3:-default}; do
		for d in $tcmud_direct; do
		for f in $kmod_fixed; do
		for z in $kmod_zc; do
			if [ "$nq" = default ]; then
				label=$(direct_label "$1" "$d") attrs="emulate_write_cache=1"
			else
				label=$(direct_label "$1-${nq}q" "$d")
				attrs="emulate_write_cache=1 nr_queues=$nq"
			fi
			ctl=""
			if [ "$f" = 1 ]; then
				label=$label-fixed ctl="max_data_area_mb=${BENCH_INSN_FIXED_MB:-16}"
				attrs="$attrs data_area_fixed=1"
			fi
			if [ "$z" = 1 ]; then
				label=$label-zc ctl="max_data_area_mb=${BENCH_INSN_FIXED_MB:-16}"
				attrs="$attrs zero_copy=1"
			fi
			bs=$(USER_BACKSTORE_CONTROL=$ctl USER_BACKSTORE_ATTRS=$attrs \
				create_user_backstore "insn-$label" file "$(file_cfg "$d")" $size)
			[ "$nq" = default ] ||
				expect_eq "$(cat "$bs/attrib/nr_queues")" "$nq" "$label attrib/nr_queues"
			wait_uio_open "$TCMUD_PID" 30
			insn_run "$label" "$(export_via_loop "$bs")"
			zc_cmds "$label" "$bs"
			remove_all_targets
		done
		done
		done
	done
	bench_stop_daemon "$TCMUD_PID"
}

# The patched modules (kmod/), same file, tcmud only.
if [ -n "$kmod" ]; then
	remove_all_targets
	rmdir "$TARGET"/core/user_* 2>/dev/null || true
	rmmod target_core_user uio || fail "could not unload the stock TCMU modules"
	TCMUD_KMOD=$kmod load_target_stack
	if [ $kmod_file = 1 ]; then
		# With BENCH_INSN_TCMUD_BEFORE, the earlier binary serves the same
		# rows first, so a daemon change on the patched path is judged in
		# this boot too.
		[ -z "${BENCH_INSN_TCMUD_BEFORE:-}" ] ||
			kmod_file_rows "${BENCH_INSN_TCMUD_BEFORE_LABEL:-tcmud-before}" \
				"$TCMUD_BUILD/$BENCH_INSN_TCMUD_BEFORE" "${BENCH_INSN_QUEUES:-1}"
		kmod_file_rows tcmud "$TCMUD_BUILD/daemon/core/tcmud" "${BENCH_INSN_QUEUES:-1}"
	fi
	if has tcmud-rbd; then
		# A daemon per row, so that each row's threads are its own.
		for nq in ${BENCH_INSN_QUEUES:-1}; do
			rbd_row "tcmud-rbd-${nq}q" tcmud "nr_queues=$nq"
			bench_stop_daemon "$BENCH_RBD_PID"
		done
	fi
	cat /proc/kallsyms > "$TCMUD_VM_OUT/kallsyms-patched.txt"
fi

# Module variants (BENCH_INSN_KMODS), one after another in this boot.
for variant in ${BENCH_INSN_KMODS:-}; do
	label=${variant%%=*} vdir=${variant#*=}
	[ -f "$vdir/target_core_user.ko" ] || fail "BENCH_INSN_KMODS: no $vdir/target_core_user.ko"
	remove_all_targets
	rmdir "$TARGET"/core/user_* 2>/dev/null || true
	rmmod target_core_user uio || fail "$label: could not unload the TCMU modules"
	TCMUD_KMOD=$vdir load_target_stack
	kmod_file_rows "$label" "$TCMUD_BUILD/daemon/core/tcmud"
	cat /proc/kallsyms > "$TCMUD_VM_OUT/kallsyms-$label.txt"
done
cp /tmp/insn/marks.log "$out/guest-marks.log"
log "bench-insn done"
