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
rbd_image $BENCH_RBD_IMAGE $((BENCH_RBD_SIZE >> 20))M
host_ceph rbd bench --io-type write --io-pattern seq --io-size 4M --io-threads 4 \
	--io-total $BENCH_RBD_SIZE "$TCMUD_CEPH_POOL/$BENCH_RBD_IMAGE" >/dev/null ||
	fail "prefilling the rbd image"
: > "$BENCH_OUT/profile.tsv"

# thread_ticks PID: "tid name ticks" for each thread (field 2 may hold
# spaces: count from the closing parenthesis).
thread_ticks() {
	local st line
	for st in /proc/"$1"/task/*/stat; do
		{ read -r line < "$st"; } 2>/dev/null || continue
		local tid=${st%/stat} rest=${line##*) } name=${line#*(}
		name=${name%%)*}
		# shellcheck disable=SC2086
		set -- $rest
		echo "${tid##*/} ${name// /_} $((${12} + ${13}))"
	done
}

# profile LABEL DEV PID: fio for 8 s; the daemon's CPU by thread name.
profile() {
	local c0 c1 t0 t1
	: > "/tmp/threads.$1.0"
	thread_ticks "$3" > "/tmp/threads.$1.0"
	c0=$(disk_commands "$2") t0=$(daemon_cpu_ticks "$3")
	fio --name=p --filename="$2" --direct=1 --ioengine=libaio --time_based --runtime=8 \
		--iodepth=16 --numjobs=2 --group_reporting --rw=randread --bs=4k \
		--output-format=json > "$BENCH_OUT/profile.$1.json" || fail "$1: fio"
	c1=$(disk_commands "$2") t1=$(daemon_cpu_ticks "$3")
	thread_ticks "$3" > "/tmp/threads.$1.1"
	printf '%s\t%s\t%s\n' "$1" $((c1 - c0)) $((t1 - t0)) >> "$BENCH_OUT/profile.tsv"
	python3 - "$1" "/tmp/threads.$1.0" "/tmp/threads.$1.1" >> "$BENCH_OUT/threads.tsv" <<'PY'
import collections, sys
def load(p):
    return {t: (n, int(c)) for t, n, c in (l.split() for l in open(p))}
a, b = load(sys.argv[2]), load(sys.argv[3])
ticks, count = collections.Counter(), collections.Counter()
for tid, (name, c) in b.items():
    ticks[name] += c - a.get(tid, (name, 0))[1]
    count[name] += 1
for name, t in ticks.most_common():
    print(f"{sys.argv[1]}\t{name}\t{count[name]}\t{t}")
PY
	log "$1: $((c1 - c0)) commands, $((t1 - t0)) ticks; by thread: $(grep "^$1" "$BENCH_OUT/threads.tsv" | head -8 | cut -f2,4 | tr '\t\n' '= ')"
}

# Alternating, BENCH_ROUNDS times (default 2): under TCG on a loaded host
# the emulated CPU time per command drifts during a boot, so one run each
# in a fixed order says little.
for round in $(seq "${BENCH_ROUNDS:-2}"); do
	start_tcmu_runner
	bs=$(bench_rbd_device prof-runner)
	wait_uio_open "$RUNNER_PID" 60
	dev=$(export_via_loop "$bs")
	bench_prepare_disk "$dev"
	profile "tcmu-runner.r$round" "$dev" "$RUNNER_PID"
	bench_stop_daemon "$RUNNER_PID"

	start_tcmud
	bs=$(bench_rbd_device prof-tcmud)
	wait_uio_open "$TCMUD_PID" 60
	dev=$(export_via_loop "$bs")
	bench_prepare_disk "$dev"
	profile "tcmud.r$round" "$dev" "$TCMUD_PID"
	bench_stop_daemon "$TCMUD_PID"
done
