# SPDX-License-Identifier: GPL-2.0-or-later
# Profile, not a test (in no suite list): where the rbd daemons' CPU goes,
# by thread. In one boot with the Ceph test bed (tests/vm/run --ceph
# memstore bench-rbd-threads), one prefilled image served in turn by
# Debian's tcmu-runner rbd handler and by tcmud, each under fio (2 jobs x
# iodepth 16, libaio direct, 8 s per workload: BENCH_PROFILE_WORKLOADS,
# default 4k randread), alternating, BENCH_ROUNDS times (default 2): an
# ABAB run, so that drift in the host's load shows instead of favouring
# whichever runs later. BENCH_PROFILE_DAEMONS (default "tcmu-runner=tcmu-runner
# tcmud=tcmud") names the rows, LABEL=DAEMON[:BINARY][@ITEMS], BINARY a tcmud
# in the build directory (a "before" build), ITEMS a variant (bench-rbd.sh,
# bench_rbd_variant_env: "+rbd_non_blocking_aio=true,GLIBC_TUNABLES=..."). The CPU time (utime + stime, clock
# ticks) and the read/write system calls each of the daemon's threads made
# meanwhile, summed by thread name, go to /vm-out/bench/threads.tsv (label,
# thread name, threads, ticks, syscr, syscw); per run profile.tsv has label,
# commands, daemon ticks, IOPS and the host's load average at the end
# (from the agent); BENCH_PROFILE_CEILING=1 adds librbd's own ceiling in
# this guest (rbd-bench.tsv, below). (perf record under TCG got 6
# samples in 5 s: the guest's sampling timer is useless.)
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-rbd.sh"
need_ceph
need_tcmud_rbd
load_target_stack
bench_rbd_image
: > "$BENCH_OUT/profile.tsv"

# profile LABEL DAEMON [BINARY [ITEMS]]: DAEMON serves the image; fio for 8 s per
# workload; its CPU by thread name.
profile() {
	local c0 c1 t0 t1 pid dev w l args iops load
	TCMUD_ENV=$(bench_rbd_variant_env "${4:-}") BENCH_RBD_CONF=$(bench_rbd_variant_conf "${4:-}") \
		TCMUD_BIN=${3:+$TCMUD_BUILD/$3} bench_rbd_serve "$2" "prof-$2"
	pid=$BENCH_RBD_PID dev=$BENCH_RBD_DEV
	for w in ${BENCH_PROFILE_WORKLOADS:-randread-4k}; do
		l=$1.$w
		read -ra args < <(bench_workload_args "$w")
		thread_ticks "$pid" > "/tmp/threads.$l.0"
		c0=$(disk_commands "$dev") t0=$(daemon_cpu_ticks "$pid")
		fio --name=p --filename="$dev" --direct=1 --ioengine=libaio --time_based --runtime=8 \
			--iodepth=16 --numjobs=2 --group_reporting "${args[@]}" \
			--output-format=json > "$BENCH_OUT/profile.$l.json" || fail "$l: fio"
		c1=$(disk_commands "$dev") t1=$(daemon_cpu_ticks "$pid")
		thread_ticks "$pid" > "/tmp/threads.$l.1"
		iops=$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(round(j["read"]["iops"] + j["write"]["iops"]))' "$BENCH_OUT/profile.$l.json")
		load=$(host_ceph loadavg | tr ' ' /) || load=-
		printf '%s\t%s\t%s\t%s\t%s\n' "$l" $((c1 - c0)) $((t1 - t0)) "$iops" "${load:--}" \
			>> "$BENCH_OUT/profile.tsv"
		threads_delta "$l" "/tmp/threads.$l.0" "/tmp/threads.$l.1" >> "$BENCH_OUT/threads.tsv"
		log "$l: $iops IOPS, $((c1 - c0)) commands, $((t1 - t0)) ticks, host load $load; by thread: $(grep "^$l" "$BENCH_OUT/threads.tsv" | head -6 | cut -f2,4 | tr '\t\n' '= ')"
		[ "${BENCH_PROFILE_STRACE:-0}" = 0 ] || syscalls "$l" "$pid" "$dev" "${args[@]}"
	done
	bench_stop_daemon "$pid"
}

# syscalls LABEL PID DEV FIO-ARGS...: with BENCH_PROFILE_STRACE=1, one more
# fio run (4 s) with every thread of the daemon under `strace -c`: system
# calls by name, per command, into strace.LABEL.txt (ptrace slows the daemon,
# so the counts per command are what to read, not the time).
syscalls() {
	local l=$1 pid=$2 dev=$3 c0 c1 spid t
	shift 3
	command -v strace >/dev/null || { log "no strace: no system call counts"; return 0; }
	local -a attach=()
	for t in /proc/"$pid"/task/*; do attach+=(-p "${t##*/}"); done
	strace -f -c -q -o "/tmp/strace.$l" "${attach[@]}" &
	spid=$!
	sleep 1
	c0=$(disk_commands "$dev")
	fio --name=s --filename="$dev" --direct=1 --ioengine=libaio --time_based --runtime=4 \
		--iodepth=16 --numjobs=2 --group_reporting "$@" --output-format=terse >/dev/null ||
		fail "$l: fio under strace"
	c1=$(disk_commands "$dev")
	kill -INT $spid
	wait $spid 2>/dev/null || true
	{ echo "commands $((c1 - c0))"; cat "/tmp/strace.$l"; } > "$BENCH_OUT/strace.$l.txt"
	log "$l under strace: $((c1 - c0)) commands; calls per command: $(awk -v n=$((c1 - c0)) \
		'$4 ~ /^[0-9]+$/ && $NF != "total" && n > 0 {printf "%s %.2f, ", $NF, $4 / n}' "/tmp/strace.$l")"
}

# Alternating: under TCG on a loaded host the emulated CPU time per
# command drifts during a boot, so one run each in a fixed order says little.
for round in $(seq "${BENCH_ROUNDS:-2}"); do
	for d in ${BENCH_PROFILE_DAEMONS:-tcmu-runner=tcmu-runner tcmud=tcmud}; do
		spec=${d#*=} variant=""
		[[ $spec != *@* ]] || { variant=${spec#*@}; spec=${spec%%@*}; }
		profile "${d%%=*}.r$round" "${spec%%:*}" \
			"$([[ $spec == *:* ]] && echo "${spec#*:}")" "$variant"
	done
done

# BENCH_PROFILE_CEILING=1: then `rbd bench` in this guest for each workload
# (bench_rbd_ceiling: the same depth, cache off) into rbd-bench.tsv, the
# ceiling the daemons' IOPS above are judged against, in the same boot
# (under tests/vm/run --icount, in the same instruction-driven time).
if [ "${BENCH_PROFILE_CEILING:-0}" != 0 ]; then
	: > "$BENCH_OUT/rbd-bench.tsv"
	BENCH_WORKLOADS=${BENCH_PROFILE_WORKLOADS:-randread-4k} bench_rbd_ceiling guest
fi
