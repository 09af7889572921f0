# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark, not a test (in no suite list; run by scripts/bench.sh): in this
# one boot the same 256 MiB prefilled file on XFS is served through tcm_loop
# by, in turn,
#   stock modules (Debian's uio.ko + target_core_user.ko):
#     fileio       LIO's in-kernel backstore (the ceiling)
#     tcmu-runner  Debian's, qcow handler on the raw image (no file handler)
#     tcmud        user:file on the classic single-ring ABI
#   patched modules (--kmod; inserted after the stock ones are unloaded):
#     tcmud-<N>q   tcmud on a device with nr_queues=N, for N in BENCH_QUEUES
#                  (with data_area_fixed=1 if BENCH_KMOD_FIXED=1)
#     pair<R>-fileio, pair<R>-tcmud-1q  with BENCH_PAIRS=N, R = 1..N: the
#                  two served at once and run in turn (below)
# and with BENCH_RBD=1 (scripts/bench.sh --rbd) the same on an rbd image of
# the host's Ceph test bed: tcmu-runner-rbd, tcmud-rbd, tcmud-rbd-<N>q, and
# `rbd bench` on the host (tests/vm/bench/bench-rbd.sh)
# and every workload x jobs value of bench-lib.sh runs against each. No two
# daemons run at once. After each half, unless BENCH_CALLGRIND=0,
# tests/vm/bench/callgrind.sh counts instructions per command for that
# half's daemons. Without --kmod only the stock half runs.
# Results land in /vm-out/bench/ for the host to tabulate.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-rbd.sh"
kmod=${TCMUD_KMOD:-}

build_id() { od -An -tx1 "/sys/module/$1/notes/.note.gnu.build-id" | tr -d ' \n' | tail -c 40; }
ko_build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }

# callgrind_stage LABEL...: each label in its own process (own set -e and
# clean-up) under a time cap, since valgrind under TCG is slow (minutes on a
# loaded host) and the timed figures must survive its failure. Returns
# non-zero if any label failed.
callgrind_stage() {
	local label rc=0
	[ "${BENCH_CALLGRIND:-1}" = 1 ] || return 0
	for label in "$@"; do
		if timeout -k 10 "${BENCH_CALLGRIND_LIMIT:-400}" \
			bash "$TCMUD_SRC/tests/vm/bench/callgrind.sh" "$img" $size "$label"; then
			log "callgrind done: $label"
		else
			log "callgrind failed or ran out of time (exit $?) for $label"
			rc=1
		fi
	done
	return $rc
}

# Stock half: Debian's modules, whatever an earlier scenario loaded.
TCMUD_KMOD="" load_target_stack
if [ -n "$kmod" ]; then
	for m in uio target_core_user; do
		[ "$(build_id $m)" != "$(ko_build_id "$kmod/$m.ko")" ] || fail "stock half: $m is ours"
	done
fi

# The backing file lives on XFS (mount_bench_xfs says why);
# BENCH_FS=tmpfs puts it straight on the guest's tmpfs instead.
img=/tmp/bench.img
if [ "${BENCH_FS:-xfs}" = xfs ]; then
	mount_bench_xfs
	img=/mnt/bench/bench.img
fi
size=$((256 << 20))
: > "$BENCH_OUT/counters.tsv"
: > "$BENCH_OUT/callgrind.tsv"
: > "$BENCH_OUT/queues.tsv"
{
	echo "kernel=$(uname -r)"
	echo "guest_cpus=$(nproc)"
	echo "clk_tck=$(getconf CLK_TCK)"
	echo "fio=$(fio --version)"
	echo "tcmu_runner=$(dpkg-query -W -f '${Version}' tcmu-runner)"
	echo "runtime_s=$BENCH_RUNTIME"
	echo "ramp_s=$BENCH_RAMP"
	echo "jobs=$BENCH_JOBS"
	echo "workloads=$BENCH_WORKLOADS"
	echo "iodepth=$BENCH_IODEPTH"
	echo "queues=${kmod:+$BENCH_QUEUES}"
	echo "kmod_fixed=${BENCH_KMOD_FIXED:-0}"
	echo "kmod_fixed_mb=${BENCH_FIXED_MB:-32}"
	echo "pairs=${BENCH_PAIRS:-0}"
	echo "callgrind_ios=$BENCH_CALLGRIND_IOS"
	echo "callgrind_jobs=$BENCH_CALLGRIND_JOBS"
	echo "backing_fs=${BENCH_FS:-xfs}"
	echo "stock_modules=uio:$(build_id uio) target_core_user:$(build_id target_core_user)"
} > "$BENCH_OUT/meta.env"
# 1 MiB of random bytes repeated: real pages of non-zero data, without
# 256 MiB of /dev/urandom, which takes minutes under TCG.
python3 -c 'import os, sys
block = os.urandom(1 << 20)
with open(sys.argv[1], "wb") as f:
    for _ in range(256): f.write(block)' $img
# Written back and read twice now, not during the first rows: the
# writeback (the loop device copying 256 MiB into tmpfs) and the first
# accesses to the just-written pages (moved to the active list on their
# second) would be charged to whichever row ran first, fileio's 4k row:
# without this it ran 1-4 % under fileio's later runs of the same boot
# (docs/benchmarks.md, "Paired runs").
sync
for _ in 1 2; do dd if=$img of=/dev/null bs=1M status=none; done
log "prefilled $img with 256 MiB of data"

# Every target runs with a write-back cache (WCE=1), so none pays for a
# durable write per command: fileio needs fd_buffered_io=1 at creation
# (otherwise it opens the file O_DSYNC); TCMU devices take the attribute,
# and tcmud, which honours WCE=0 by making every write FUA (tcmu-runner's
# qcow handler does not), then writes through the page cache like the rest.
dev=$(export_via_loop "$(create_fileio_backstore bench-fileio $img $size ,fd_buffered_io=1)")
bench_prepare_disk "$dev"
bench_run fileio "$dev"
remove_all_targets

mkdir -p /etc/tcmu /var/log/tcmu
tcmu-runner -l /var/log/tcmu &
runner=$!
stop_on_exit $runner
bs=$(USER_BACKSTORE_ATTRS=emulate_write_cache=1 create_user_backstore bench-runner qcow $img $size)
wait_uio_open $runner 30
dev=$(export_via_loop "$bs")
grep -q "treat as raw" /var/log/tcmu/tcmu-runner.log || fail "qcow handler did not open the raw image"
bench_prepare_disk "$dev"
bench_run tcmu-runner "$dev" $runner
bench_stop_daemon $runner
cp /var/log/tcmu/tcmu-runner.log "$BENCH_OUT/tcmu-runner.log"

start_tcmud
bs=$(USER_BACKSTORE_ATTRS=emulate_write_cache=1 create_user_backstore bench-tcmud file $img $size)
wait_uio_open "$TCMUD_PID" 30
dev=$(export_via_loop "$bs")
bench_prepare_disk "$dev"
bench_run tcmud "$dev" "$TCMUD_PID"
bench_stop_daemon "$TCMUD_PID"
bench_queue_totals tcmud bench-tcmud "$TCMUD_LOG"
# BENCH_RBD=1: the same workloads on an rbd image (tests/vm/bench/bench-rbd.sh).
bench_rbd_stock

callgrind_ok=1
callgrind_stage tcmud tcmu-runner || callgrind_ok=0
if [ -z "$kmod" ]; then
	log "bench done (stock half only: no --kmod)"
	exit 0
fi

# Swap: every TCMU device gone, then Debian's modules out and ours in. A
# callgrind stage that failed may have left a device behind that cannot be
# removed; the patched half is then skipped rather than the boot hung.
remove_all_targets
rmdir "$TARGET"/core/user_* 2>/dev/null || true
if ! rmmod target_core_user uio; then
	[ $callgrind_ok = 1 ] || { trap - EXIT; log "bench done (patched half skipped: modules busy)"; exit 0; }
	fail "could not unload the stock TCMU modules"
fi
TCMUD_KMOD=$kmod load_target_stack
for m in uio target_core_user; do
	expect_eq "$(build_id $m)" "$(ko_build_id "$kmod/$m.ko")" "$m build-id (live vs --kmod)"
done
echo "patched_modules=uio:$(build_id uio) target_core_user:$(build_id target_core_user)" >> "$BENCH_OUT/meta.env"
log "patched modules live"

start_tcmud
labels=()
# BENCH_KMOD_FIXED=1 (scripts/bench.sh --fixed): every patched row with
# kmod patch 0009's data_area_fixed, which tcmud registers as io_uring
# fixed buffers; the area is allocated whole at enable, so it is kept to
# BENCH_FIXED_MB per queue (32: 4 jobs x 16 x 128 KiB in flight need 8).
fixed_attrs="" fixed_ctl=""
if [ "${BENCH_KMOD_FIXED:-0}" != 0 ]; then
	fixed_attrs="data_area_fixed=1" fixed_ctl="max_data_area_mb=${BENCH_FIXED_MB:-32}"
fi
for nq in $BENCH_QUEUES; do
	bs=$(USER_BACKSTORE_ATTRS="emulate_write_cache=1 nr_queues=$nq $fixed_attrs" \
		USER_BACKSTORE_CONTROL="$fixed_ctl" create_user_backstore "bench-q$nq" file $img $size)
	expect_eq "$(cat "$bs/attrib/nr_queues")" "$nq" "bench-q$nq attrib/nr_queues"
	wait_uio_open "$TCMUD_PID" 30
	if [ -n "$fixed_attrs" ]; then
		expect_eq "$(cat "$bs/attrib/data_area_fixed")" 1 "bench-q$nq attrib/data_area_fixed"
		[ "$(grep -c "bench-q$nq.*registered as io_uring fixed buffers" "$TCMUD_LOG")" = "$nq" ] ||
			fail "tcmud did not register bench-q$nq's $nq data area(s) as fixed buffers"
	fi
	dev=$(export_via_loop "$bs")
	grep -q "bench-q$nq: serving /dev/uio.*$nq queue(s)" "$TCMUD_LOG" ||
		fail "tcmud did not serve bench-q$nq with $nq queues"
	bench_prepare_disk "$dev"
	bench_run "tcmud-${nq}q" "$dev" "$TCMUD_PID"
	remove_all_targets
	bench_queue_totals "tcmud-${nq}q" "bench-q$nq" "$TCMUD_LOG"
	labels+=("tcmud-${nq}q")
done
# BENCH_PAIRS=N (scripts/bench.sh --pairs N): fileio and tcmud-1q served at
# once, each workload x jobs value run N times on each in turn, the order
# swapped every pair (ABBA), so that the ratio between them comes with its
# spread from one boot, and drift in the host or the guest cancels out.
if [ "${BENCH_PAIRS:-0}" -gt 0 ]; then
	fdev=$(export_via_loop "$(create_fileio_backstore pair-fileio $img $size ,fd_buffered_io=1)")
	bs=$(USER_BACKSTORE_ATTRS="emulate_write_cache=1 nr_queues=1 $fixed_attrs" \
		USER_BACKSTORE_CONTROL="$fixed_ctl" create_user_backstore pair-q1 file $img $size)
	wait_uio_open "$TCMUD_PID" 30
	tdev=$(export_via_loop "$bs")
	bench_prepare_disk "$fdev"
	bench_prepare_disk "$tdev"
	for workload in $BENCH_WORKLOADS; do
		for jobs in $BENCH_JOBS; do
			for r in $(seq "$BENCH_PAIRS"); do
				if [ $((r % 2)) = 1 ]; then
					bench_fio "pair$r-fileio" "$workload" "$jobs" "$fdev"
					bench_fio "pair$r-tcmud-1q" "$workload" "$jobs" "$tdev"
				else
					bench_fio "pair$r-tcmud-1q" "$workload" "$jobs" "$tdev"
					bench_fio "pair$r-fileio" "$workload" "$jobs" "$fdev"
				fi
			done
		done
	done
	remove_all_targets
	bench_queue_totals pair-tcmud-1q pair-q1 "$TCMUD_LOG"
fi
bench_rbd_patched
bench_stop_daemon "$TCMUD_PID"
callgrind_stage "${labels[@]}" || trap - EXIT
log "bench done"
