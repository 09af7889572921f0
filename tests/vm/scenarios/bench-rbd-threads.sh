# SPDX-License-Identifier: GPL-2.0-or-later
# Profile, not a test (in no suite list): where the rbd daemons' CPU goes,
# by thread. In one boot with the Ceph test bed (tests/vm/run --ceph
# memstore bench-rbd-threads), one prefilled image served in turn by
# Debian's tcmu-runner rbd handler and by tcmud, each under fio 4k randread
# (2 jobs x iodepth 16, libaio direct, 8 s), alternating, twice; the CPU time (utime + stime,
# clock ticks) each of the daemon's threads used meanwhile, summed by
# thread name, goes to /vm-out/bench/threads.tsv (daemon, thread name,
# threads, ticks), the commands each served to profile.tsv. (perf record
# under TCG got 6 samples in 5 s: the guest's sampling timer is useless.)
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-rbd.sh"
need_ceph
need_tcmud_rbd
load_target_stack
bench_rbd_image
: > "$BENCH_OUT/profile.tsv"

# profile LABEL DAEMON: DAEMON serves the image; fio for 8 s; its CPU by
# thread name.
profile() {
	local c0 c1 t0 t1 pid dev
	bench_rbd_serve "$2" "prof-$2"
	pid=$BENCH_RBD_PID dev=$BENCH_RBD_DEV
	thread_ticks "$pid" > "/tmp/threads.$1.0"
	c0=$(disk_commands "$dev") t0=$(daemon_cpu_ticks "$pid")
	fio --name=p --filename="$dev" --direct=1 --ioengine=libaio --time_based --runtime=8 \
		--iodepth=16 --numjobs=2 --group_reporting --rw=randread --bs=4k \
		--output-format=json > "$BENCH_OUT/profile.$1.json" || fail "$1: fio"
	c1=$(disk_commands "$dev") t1=$(daemon_cpu_ticks "$pid")
	thread_ticks "$pid" > "/tmp/threads.$1.1"
	bench_stop_daemon "$pid"
	printf '%s\t%s\t%s\n' "$1" $((c1 - c0)) $((t1 - t0)) >> "$BENCH_OUT/profile.tsv"
	threads_delta "$1" "/tmp/threads.$1.0" "/tmp/threads.$1.1" >> "$BENCH_OUT/threads.tsv"
	log "$1: $((c1 - c0)) commands, $((t1 - t0)) ticks; by thread: $(grep "^$1" "$BENCH_OUT/threads.tsv" | head -8 | cut -f2,4 | tr '\t\n' '= ')"
}

# Alternating, BENCH_ROUNDS times (default 2): under TCG on a loaded host
# the emulated CPU time per command drifts during a boot, so one run each
# in a fixed order says little.
for round in $(seq "${BENCH_ROUNDS:-2}"); do
	profile "tcmu-runner.r$round" tcmu-runner
	profile "tcmud.r$round" tcmud
done
