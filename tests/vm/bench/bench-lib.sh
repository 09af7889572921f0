# Guest-side helpers for the benchmark scenario (tests/vm/scenarios/bench-stock.sh),
# sourced after tests/vm/guest/lib.sh. A benchmark, not a test: it fails only
# when a run cannot be measured at all, never on a figure.
#
# Every run leaves in $BENCH_OUT:
#   <target>-<job>.json   fio's own JSON
#   counters.tsv          target job commands ctxt_voluntary ctxt_nonvoluntary cpu_ticks
#                         (the daemon's counts over the whole fio run; "-" for fileio)
#   callgrind.tsv         target commands instructions (from callgrind dumps)
# Commands are the SCSI commands the disk completed (/sys/block/sdX/stat),
# counted over the same window as the daemon's counters, ramp time included;
# a 128k read on a TCMU LUN (max_sectors_kb 64) is two commands.

BENCH_OUT=${TCMUD_VM_OUT:-/tmp}/bench
BENCH_RUNTIME=${BENCH_RUNTIME:-8}
BENCH_CALLGRIND_IOS=${BENCH_CALLGRIND_IOS:-300}
mkdir -p "$BENCH_OUT"

# The three fio jobs, by name: extra fio arguments for each.
BENCH_JOBS=(randread-4k randread-128k randwrite-4k)
bench_job_args() {
	case $1 in
	randread-4k) echo "--rw=randread --bs=4k --iodepth=16 --numjobs=2" ;;
	randread-128k) echo "--rw=randread --bs=128k --iodepth=16 --numjobs=2" ;;
	randwrite-4k) echo "--rw=randwrite --bs=4k --iodepth=16 --numjobs=1" ;;
	*) fail "unknown bench job $1" ;;
	esac
}

# PID -> "voluntary nonvoluntary", summed over the process's live threads.
daemon_ctxt_switches() {
	cat /proc/"$1"/task/*/status |
		awk '/^voluntary_ctxt/ {v += $2} /^nonvoluntary_ctxt/ {n += $2} END {print v + 0, n + 0}'
}

# PID -> utime + stime in clock ticks, all threads (fields 14 and 15 of
# /proc/PID/stat; the command name in field 2 may hold spaces, so count
# from the closing parenthesis).
daemon_cpu_ticks() {
	sed 's/.*) //' /proc/"$1"/stat | awk '{print $12 + $13}'
}

# /dev/sdX -> commands completed so far: reads + writes + discards + flushes.
disk_commands() {
	awk '{print $1 + $5 + ($12 + 0) + ($16 + 0)}' "/sys/block/$(basename "$1")/stat"
}

# bench_prepare_disk /dev/sdX: the same queue settings for every target.
bench_prepare_disk() {
	echo none > "/sys/block/$(basename "$1")/queue/scheduler" 2>/dev/null || true
	log "$1: max_sectors_kb $(cat "/sys/block/$(basename "$1")/queue/max_sectors_kb")"
}

# bench_run TARGET DEV [DAEMON_PID]: the three jobs on DEV, fio JSON and
# the daemon's counters into $BENCH_OUT.
bench_run() {
	local target=$1 dev=$2 pid=${3:-} job c0 c1 v0=0 n0=0 t0=0 v1=0 n1=0 t1=0 args
	for job in "${BENCH_JOBS[@]}"; do
		read -ra args < <(bench_job_args "$job")
		c0=$(disk_commands "$dev")
		if [ -n "$pid" ]; then
			read -r v0 n0 < <(daemon_ctxt_switches "$pid"); t0=$(daemon_cpu_ticks "$pid")
		fi
		fio --name="$job" --filename="$dev" --direct=1 --ioengine=libaio \
			--time_based --runtime="$BENCH_RUNTIME" --ramp_time=2 \
			--group_reporting --output-format=json "${args[@]}" \
			> "$BENCH_OUT/$target-$job.json" || fail "$target $job: fio"
		if [ -n "$pid" ]; then
			read -r v1 n1 < <(daemon_ctxt_switches "$pid"); t1=$(daemon_cpu_ticks "$pid")
		fi
		c1=$(disk_commands "$dev")
		if [ -n "$pid" ]; then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$job" $((c1 - c0)) \
				$((v1 - v0)) $((n1 - n0)) $((t1 - t0)) >> "$BENCH_OUT/counters.tsv"
		else
			printf '%s\t%s\t%s\t-\t-\t-\n' "$target" "$job" $((c1 - c0)) >> "$BENCH_OUT/counters.tsv"
		fi
		log "$target $job: $((c1 - c0)) commands, ctxt $((v1 - v0))+$((n1 - n0)), cpu $((t1 - t0)) ticks"
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

# start_under_callgrind TARGET CMD... -> sets CALLGRIND_PID; the daemon's
# own output and valgrind's go to $BENCH_OUT/valgrind-TARGET.log.
start_under_callgrind() {
	local target=$1
	shift
	valgrind --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$BENCH_OUT/callgrind.$target.%p" "$@" \
		>> "$BENCH_OUT/valgrind-$target.log" 2>&1 &
	CALLGRIND_PID=$!
	stop_on_exit "$CALLGRIND_PID"
}

# callgrind_run TARGET PID DEV: instructions the daemon (all threads) ran for
# BENCH_CALLGRIND_IOS 4k random reads, queue depth 16, one job. The daemon
# runs under start_under_callgrind; instrumentation goes on before the
# device is created, counters are zeroed just before fio and dumped just
# after it (dump file <out>.PID.1), so start-up and set-up are not counted.
callgrind_run() {
	local target=$1 pid=$2 dev=$3 c0 c1 dump ir
	dump=$BENCH_OUT/callgrind.$target.$pid.1
	callgrind_control -z "$pid" >/dev/null || fail "$target: callgrind_control -z"
	c0=$(disk_commands "$dev")
	fio --name=callgrind --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randread --bs=4k --iodepth=16 --numjobs=1 \
		--number_ios="$BENCH_CALLGRIND_IOS" --output-format=json \
		> "$BENCH_OUT/$target-callgrind.json" || fail "$target callgrind: fio"
	c1=$(disk_commands "$dev")
	callgrind_control -d "$pid" >/dev/null || fail "$target: callgrind_control -d"
	for _ in $(seq 150); do grep -q '^totals:' "$dump" 2>/dev/null && break; sleep 0.2; done
	ir=$(awk '/^totals:/ {print $2}' "$dump" 2>/dev/null)
	[ -n "$ir" ] || fail "$target: no callgrind totals in $dump"
	printf '%s\t%s\t%s\n' "$target" $((c1 - c0)) "$ir" >> "$BENCH_OUT/callgrind.tsv"
	log "$target callgrind: $((c1 - c0)) commands, $ir instructions"
}
