# SPDX-License-Identifier: GPL-2.0-or-later
# Guest-side helpers for the benchmark scenario (tests/vm/scenarios/bench-mq.sh),
# sourced after tests/vm/guest/lib.sh. A benchmark, not a test: it fails only
# when a run cannot be measured at all, never on a figure.
#
# Parameters (environment, written to $TCMUD_BUILD/bench.env by scripts/bench.sh):
#   BENCH_RUNTIME      seconds each fio run measures (default 5)
#   BENCH_RAMP         seconds of ramp before that (default 1)
#   BENCH_JOBS         fio numjobs values, each a run (default "1 2 4")
#   BENCH_WORKLOADS    workloads, see bench_workload_args (default all three)
#   BENCH_IODEPTH      queue depth of each fio job (default 16)
#   BENCH_QUEUES       nr_queues values for tcmud on the patched modules
#   BENCH_CALLGRIND_IOS, BENCH_CALLGRIND_JOBS   the callgrind pass
#
# Every run leaves in $BENCH_OUT:
#   <label>-<workload>-j<jobs>.json   fio's own JSON
#   counters.tsv   label workload jobs commands ctxt_voluntary ctxt_nonvoluntary cpu_ticks
#                  idle_pct (the daemon's counts over the whole fio run; "-" for
#                  fileio; idle_pct: the guest's idle + iowait share of all its
#                  CPUs' time over the same window, every row)
#   callgrind.tsv  label commands instructions (from callgrind dumps)
#   queues.tsv     label queue commands doorbells (tcmud's per-queue totals)
# Commands are the SCSI commands the disk completed (/sys/block/sdX/stat),
# counted over the same window as the daemon's counters, ramp time included;
# a 128k read is two commands on a LUN that advertises 64 KiB (tcmu-runner;
# tcmud before it sized its limit to the data area), one on tcmud and fileio.

# The scenario and callgrind.sh (its own process) both read the run's file.
# shellcheck source=/dev/null
[ -f "${TCMUD_BUILD:-}/bench.env" ] && . "$TCMUD_BUILD/bench.env"
BENCH_OUT=${TCMUD_VM_OUT:-/tmp}/bench
BENCH_RUNTIME=${BENCH_RUNTIME:-5}
BENCH_RAMP=${BENCH_RAMP:-1}
BENCH_JOBS=${BENCH_JOBS:-1 2 4}
BENCH_WORKLOADS=${BENCH_WORKLOADS:-randread-4k randwrite-4k randread-128k}
BENCH_IODEPTH=${BENCH_IODEPTH:-16}
BENCH_QUEUES=${BENCH_QUEUES:-1 2 4}
BENCH_CALLGRIND_IOS=${BENCH_CALLGRIND_IOS:-200}
BENCH_CALLGRIND_JOBS=${BENCH_CALLGRIND_JOBS:-2}
mkdir -p "$BENCH_OUT"

# Workload name -> fio arguments.
bench_workload_args() {
	case $1 in
	randread-4k) echo "--rw=randread --bs=4k" ;;
	randwrite-4k) echo "--rw=randwrite --bs=4k" ;;
	randread-128k) echo "--rw=randread --bs=128k" ;;
	*) fail "unknown bench workload $1" ;;
	esac
}

# ctxt_sampler PID OUT READY STOP: context switches of all PID's threads from
# now until STOP exists, written to OUT as "voluntary nonvoluntary". A
# thread's counts vanish from /proc when it exits, and io_uring's io-wq
# workers come and go (they exit after 5 s idle), so a before/after sum over
# the live threads undercounts, even goes negative. This samples every
# thread every 4 s and sums, per thread id, the last value seen minus the
# first (0 for a thread born after the start): a worker's count stops
# moving 5 s before it exits, so a pass in between sees its final value.
# READY appears after the first pass.
# It runs beside the daemon rows only, so what it costs the guest is taken
# from them alone: under -icount, a pass each second with a forked sleep(1)
# and a while-read loop over each status file cost tcmud-1q 11-17 % of its
# 4k IOPS (1,844-2,004 against 2,214-2,265 without it, fileio 2,581-2,621;
# 2 jobs, 0001-0016 fixed); mapfile and a builtin wait, still each second,
# 4-9 %; the same every 4 s, nothing measurable (2,228 against 2,237-2,312).
# A pass's own instructions (~2.5 ms of guest time a file) explain less
# than that: how a pass disturbs the rows was not found.
ctxt_sampler() {
	local pid=$1 out=$2 ready=$3 stop=$4 st tid v n i last=0 tv=0 tn=0 nap
	local -a lines
	local -A v0 n0 v1 n1
	exec {nap}<> <(:)
	while :; do
		[ -e "$stop" ] && last=1
		for st in /proc/"$pid"/task/*/status; do
			tid=${st%/status} v="" n=""
			tid=${tid##*/}
			# mapfile reads a file a block at a time (a while-read
			# loop takes a read(2) a line). The counts sit near the end.
			{ mapfile -t lines < "$st"; } 2>/dev/null || continue
			for ((i = ${#lines[@]} - 1; i >= 0 && i >= ${#lines[@]} - 8; i--)); do
				case ${lines[i]} in
				voluntary_ctxt_switches:*) v=${lines[i]//[!0-9]/} ;;
				nonvoluntary_ctxt_switches:*) n=${lines[i]//[!0-9]/} ;;
				esac
			done
			[[ -n $v && -n $n ]] || continue
			[ -e "$ready" ] || { v0[$tid]=$v; n0[$tid]=$n; }
			v1[$tid]=$v n1[$tid]=$n
		done
		[ -e "$ready" ] || : > "$ready"
		[ $last = 1 ] && break
		read -r -t 4 -u "$nap" _ || :
	done
	exec {nap}<&-
	for tid in "${!v1[@]}"; do
		tv=$((tv + v1[$tid] - ${v0[$tid]:-0})) tn=$((tn + n1[$tid] - ${n0[$tid]:-0}))
	done
	echo "$tv $tn" > "$out"
}

# PID -> utime + stime in clock ticks, all threads, exited ones included
# (fields 14 and 15 of /proc/PID/stat; the command name in field 2 may hold
# spaces, so count from the closing parenthesis).
daemon_cpu_ticks() {
	sed 's/.*) //' /proc/"$1"/stat | awk '{print $12 + $13}'
}

# thread_ticks PID: "tid name ticks syscr syscw" for each of PID's threads:
# CPU ticks (utime + stime) and the read(2)- and write(2)-family system
# calls it made (/proc/PID/task/TID/io; io_uring's operations are not
# system calls and do not count). The name in field 2 of stat may hold
# spaces: count from the closing parenthesis; spaces in it become _.
thread_ticks() {
	local st line k v r w
	for st in /proc/"$1"/task/*/stat; do
		{ read -r line < "$st"; } 2>/dev/null || continue
		local tid=${st%/stat} rest=${line##*) } name=${line#*(}
		name=${name%%)*}
		r=0 w=0
		while read -r k v; do
			case $k in syscr:) r=$v ;; syscw:) w=$v ;; esac
		done < "$tid/io" 2>/dev/null || true
		# shellcheck disable=SC2086
		set -- $rest
		echo "${tid##*/} ${name// /_} $((${12} + ${13})) $r $w"
	done
}

# threads_delta PREFIX BEFORE AFTER: from two thread_ticks snapshots, one
# line per thread name, busiest first:
# PREFIX<TAB>name<TAB>threads<TAB>ticks<TAB>syscr<TAB>syscw
# (PREFIX may hold tabs: "label<TAB>workload<TAB>rep").
threads_delta() {
	python3 - "$1" "$2" "$3" <<'PY'
import collections, sys
def load(p):
    out = {}
    for line in open(p):
        f = line.split()
        out[f[0]] = (f[1], [int(x) for x in f[2:5]] + [0] * (5 - len(f)))
    return out
a, b = load(sys.argv[2]), load(sys.argv[3])
sums, count = collections.defaultdict(lambda: [0, 0, 0]), collections.Counter()
for tid, (name, v) in b.items():
    old = a.get(tid, (name, [0, 0, 0]))[1]
    for i in range(3):
        sums[name][i] += v[i] - old[i]
    count[name] += 1
for name, (t, r, w) in sorted(sums.items(), key=lambda kv: -kv[1][0]):
    print(f"{sys.argv[1]}\t{name}\t{count[name]}\t{t}\t{r}\t{w}")
PY
}

# /dev/sdX -> commands completed so far: reads + writes + discards + flushes.
disk_commands() {
	awk '{print $1 + $5 + ($12 + 0) + ($16 + 0)}' "/sys/block/$(basename "$1")/stat"
}

# -> "idle total": the guest's idle + iowait and all jiffies so far, all CPUs.
# Under -icount a halted guest's time passes in host time, so the share of
# it a row leaves idle is time no instruction ran (waits on timers or on the
# host), which instructions per command do not show.
guest_cpu_jiffies() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $5 + $6, t; exit }' /proc/stat
}

# bench_prepare_disk /dev/sdX: the same queue settings for every target.
bench_prepare_disk() {
	echo none > "/sys/block/$(basename "$1")/queue/scheduler" 2>/dev/null || true
	log "$1: max_sectors_kb $(cat "/sys/block/$(basename "$1")/queue/max_sectors_kb")"
}

# bench_fio LABEL WORKLOAD JOBS DEV [DAEMON_PID]: one fio run, its JSON and
# the daemon's counters into $BENCH_OUT.
bench_fio() {
	local label=$1 workload=$2 jobs=$3 dev=$4 pid=${5:-} c0 c1 v=0 n=0 t0=0 t1=0 args
	local idle0 all0 idle1 all1 idle_pct
	local tmp=/tmp/bench-ctxt sampler
	read -ra args < <(bench_workload_args "$workload")
	if [ -n "$pid" ]; then
		rm -f $tmp.*
		ctxt_sampler "$pid" $tmp.out $tmp.ready $tmp.stop &
		sampler=$!
		while [ ! -e $tmp.ready ]; do
			kill -0 "$sampler" 2>/dev/null || fail "$label: context switch sampler ended before its first pass"
			sleep 0.1
		done
		t0=$(daemon_cpu_ticks "$pid")
	fi
	c0=$(disk_commands "$dev")
	read -r idle0 all0 < <(guest_cpu_jiffies)
	fio --name="$workload" --filename="$dev" --direct=1 --ioengine=libaio \
		--time_based --runtime="$BENCH_RUNTIME" --ramp_time="$BENCH_RAMP" \
		--iodepth="$BENCH_IODEPTH" --numjobs="$jobs" \
		--group_reporting --output-format=json "${args[@]}" \
		> "$BENCH_OUT/$label-$workload-j$jobs.json" || fail "$label $workload j$jobs: fio"
	c1=$(disk_commands "$dev")
	read -r idle1 all1 < <(guest_cpu_jiffies)
	idle_pct=$(awk -v i=$((idle1 - idle0)) -v a=$((all1 - all0)) 'BEGIN { printf "%.1f", a ? 100 * i / a : 0 }')
	if [ -n "$pid" ]; then
		t1=$(daemon_cpu_ticks "$pid")
		: > $tmp.stop
		wait "$sampler" || fail "$label: context switch sampler"
		read -r v n < $tmp.out
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$workload" "$jobs" $((c1 - c0)) \
			"$v" "$n" $((t1 - t0)) "$idle_pct" >> "$BENCH_OUT/counters.tsv"
	else
		printf '%s\t%s\t%s\t%s\t-\t-\t-\t%s\n' "$label" "$workload" "$jobs" $((c1 - c0)) \
			"$idle_pct" >> "$BENCH_OUT/counters.tsv"
	fi
	log "$label $workload j$jobs: $((c1 - c0)) commands, ctxt $v+$n, cpu $((t1 - t0)) ticks, guest idle $idle_pct %"
}

# bench_run LABEL DEV [DAEMON_PID]: every workload x every jobs value on DEV.
bench_run() {
	local workload jobs
	for workload in $BENCH_WORKLOADS; do
		for jobs in $BENCH_JOBS; do
			bench_fio "$1" "$workload" "$jobs" "$2" "${3:-}"
		done
	done
}

# bench_queue_totals LABEL DEVICE LOG: tcmud's per-queue "stopped after N
# commands ... and M doorbells" lines for DEVICE (logged when it is removed)
# into queues.tsv. They cover all runs on that device, not one run. The
# daemon logs them after the removal returns, so they are waited for (5 s).
bench_queue_totals() {
	for _ in $(seq 50); do
		grep -q "$2: queue [0-9]*: stopped after" "$3" && break
		sleep 0.1
	done
	{ grep "$2: queue [0-9]*: stopped after" "$3" || true; } |
		sed 's/.*queue \([0-9]*\): stopped after \([0-9]*\) commands.* and \([0-9]*\) doorbells.*/\1 \2 \3/' |
		while read -r q cmds bells; do
			printf '%s\t%s\t%s\t%s\n' "$1" "$q" "$cmds" "$bells" >> "$BENCH_OUT/queues.tsv"
		done
}

# bench_stop_daemon PID: targets first (a TCMU device whose daemon died
# first makes the LUN's last SYNCHRONIZE CACHE wait for the command timeout),
# then the daemon, waited for, so the next one finds the devices free.
bench_stop_daemon() {
	remove_all_targets
	kill "$1" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# wait_uio_open PID SECONDS: until the daemon holds a /dev/uioN open, so the
# LUN is not exported (and scanned) before anyone serves its ring.
wait_uio_open() {
	local fd
	for _ in $(seq $(($2 * 5))); do
		for fd in /proc/"$1"/fd/*; do
			[[ $(readlink "$fd" 2>/dev/null) == /dev/uio* ]] && return 0
		done
		kill -0 "$1" 2>/dev/null || fail "daemon $1 exited"
		sleep 0.2
	done
	fail "daemon $1 did not open the uio device within $2 s"
}

# start_under_callgrind LABEL CMD... -> sets CALLGRIND_PID; the daemon's
# own output and valgrind's go to $BENCH_OUT/valgrind-LABEL.log.
start_under_callgrind() {
	local label=$1
	shift
	valgrind --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$BENCH_OUT/callgrind.$label.%p" "$@" \
		>> "$BENCH_OUT/valgrind-$label.log" 2>&1 &
	CALLGRIND_PID=$!
	stop_on_exit "$CALLGRIND_PID"
}

# callgrind_run LABEL PID DEV: instructions the daemon (all threads) ran for
# BENCH_CALLGRIND_IOS 4k random reads per job, BENCH_CALLGRIND_JOBS jobs,
# queue depth 16. The daemon runs under start_under_callgrind;
# instrumentation goes on before the device is created, counters are zeroed
# just before fio and dumped just after it (dump file <out>.PID.1), so
# start-up and set-up are not counted.
callgrind_run() {
	local label=$1 pid=$2 dev=$3 c0 c1 dump ir
	dump=$BENCH_OUT/callgrind.$label.$pid.1
	callgrind_control -z "$pid" >/dev/null || fail "$label: callgrind_control -z"
	c0=$(disk_commands "$dev")
	fio --name=callgrind --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randread --bs=4k --iodepth=16 --numjobs="$BENCH_CALLGRIND_JOBS" \
		--number_ios="$BENCH_CALLGRIND_IOS" --group_reporting --output-format=json \
		> "$BENCH_OUT/$label-callgrind.json" || fail "$label callgrind: fio"
	c1=$(disk_commands "$dev")
	callgrind_control -d "$pid" >/dev/null || fail "$label: callgrind_control -d"
	for _ in $(seq 150); do grep -q '^totals:' "$dump" 2>/dev/null && break; sleep 0.2; done
	ir=$(awk '/^totals:/ {print $2}' "$dump" 2>/dev/null)
	[ -n "$ir" ] || fail "$label: no callgrind totals in $dump"
	printf '%s\t%s\t%s\n' "$label" $((c1 - c0)) "$ir" >> "$BENCH_OUT/callgrind.tsv"
	log "$label callgrind: $((c1 - c0)) commands, $ir instructions"
}
