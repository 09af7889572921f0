# SPDX-License-Identifier: GPL-2.0-or-later
# Multi-queue TCMU under pressure, per queue (needs --kmod):
#  1. qfull and data-area reclaim: nr_queues=2 and 4 with max_data_area_mb=1
#     (256 KiB of data blocks per queue at N=4) under 8 fio jobs of 64 KiB
#     writes at iodepth 16 (8 MiB in flight): commands wait for data space
#     on every queue a CPU maps to (the kernel's "running ... cmdr queue Q"
#     debug line, enabled through dynamic debug, counts the qfull runs per
#     queue); the crc32c verify passes and received = completed per queue.
#  2. timeouts on one queue: the client stalls queue 1 (it consumes but
#     completes nothing); 64 KiB READs submitted from CPU 1 fill queue 1's
#     data area and wait in its qfull list: queue 1's qfull_time_out and
#     cmd_time_out fire (and queue 0's never), every command stuck in queue
#     1's ring ends in CHECK CONDITION, while a write+verify pinned to CPU 0
#     passes on queue 0 meanwhile. Released, queue 1 completes the expired
#     commands (the kernel only reclaims their data blocks) and a fio verify
#     on both queues passes: the space came back.
#  3. TMR: with tmr_notification=1, queue 1 stalled holding READs, a LUN
#     reset (sg_reset -d) puts a TMR entry on queue 1 listing exactly the
#     commands it holds and one on queue 0; released, the reset completes and
#     a verify passes.
#  4. a queue whose uio device nobody opened: the client serves queue 0
#     only (--serve-queues 1), as a daemon unaware of queues does. The
#     kernel steers nothing to queue 1 (kmod patch 0019): the disk appears,
#     and 64 KiB READs and a write+verify pinned to CPU 1 pass on queue 0
#     at once, where they used to wait on queue 1 until cmd_time_out.
#     Lowering global_max_data_area_mb below the pages in use then runs the
#     reclaim over both queues: queue 1 has no mapping (its uio device was
#     never opened), which the first version of the one-uio-device-per-queue
#     patch dereferenced (q->inode NULL: an oops).
# No kernel oops/WARN/hang (the verdict), no broken ring, and the client's
# received = completed on every queue at the end.
# $TCMUD_BUILD/kmod-mq-pressure.env may set PRESSURE_PARTS to a subset of
# "qfull stall tmr partial" (to rerun one part by hand).
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/kmod-client/vm-lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
load_target_stack
[ "$(nproc)" -ge 2 ] || skip "needs at least 2 vCPUs (queue 1 is fed from CPU 1)"
size=$((64 << 20))
# shellcheck source=/dev/null
[ -f "$TCMUD_BUILD/kmod-mq-pressure.env" ] && . "$TCMUD_BUILD/kmod-mq-pressure.env"
parts=" ${PRESSURE_PARTS:-qfull stall tmr partial} "
kmsg=/tmp/pressure-kmsg.txt

# The kernel's pr_debug lines for the qfull list and the per-queue timers.
dyndbg() {  # +p or -p
	local f
	for f in run_qfull_queue tcmu_cmd_timedout tcmu_qfull_timedout tcmu_tmr_notify \
		find_free_blocks; do
		echo "module target_core_user func $f $1" > /proc/dynamic_debug/control
	done
}
# Every kernel log record from now on, kept by a /dev/kmsg reader: the ring
# buffer alone overflows under the qfull debug lines. It exits 0 on SIGTERM
# (lib.sh's clean-up stops it) and skips records it was too slow to read.
python3 -c '
import os, signal, sys
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
fd = os.open("/dev/kmsg", os.O_RDONLY)
os.lseek(fd, 0, os.SEEK_END)
with open(sys.argv[1], "w") as out:
    while True:
        try:
            rec = os.read(fd, 8192)
        except BrokenPipeError:
            continue
        out.write(rec.decode(errors="replace").split(";", 1)[-1])
        out.flush()
' "$kmsg" &
stop_on_exit $!
kcount() { grep -c "$1" "$kmsg" || true; }
for _ in $(seq 100); do [ -e "$kmsg" ] && break; sleep 0.1; done
[ -e "$kmsg" ] || fail "the /dev/kmsg reader did not start"
dyndbg +p

# client_field LOG QUEUE FIELD: FIELD of queue QUEUE in the latest stats.
client_field() {
	grep "^stats queue $2:" "$1" | tail -n1 | sed -n "s/.* $3=\([0-9]*\).*/\1/p"
}
client_stats() {  # PID LOG: asks for a fresh stats line and waits for it
	local before
	before=$(grep -c '^stats total' "$2" || true)
	kill -USR1 "$1"
	for _ in $(seq 50); do
		[ "$(grep -c '^stats total' "$2" || true)" -gt "$before" ] && return 0
		sleep 0.1
	done
	fail "client $1 did not report its stats"
}
toggle_stall() {  # PID LOG WANT(held|released)
	local before
	before=$(grep -c '^stall queue' "$2" || true)
	kill -USR2 "$1"
	for _ in $(seq 50); do
		[ "$(grep -c '^stall queue' "$2" || true)" -gt "$before" ] && break
		sleep 0.1
	done
	expect_eq "$(grep '^stall queue' "$2" | tail -n1 | sed 's/.*: //')" "$3" "client stall state"
}

# read_burst SG CPU COUNT TAG TIMEOUT_S: COUNT 64 KiB READ(10)s at distinct
# LBAs, each its own sg_raw pinned to CPU, in the background; results in
# /tmp/TAG.N.*. A READ that ends in TASK SET FULL (qfull_time_out) is
# requeued by the SCSI midlayer until TIMEOUT_S has passed.
read_burst() {
	local sg=$1 cpu=$2 n=$3 tag=$4 tmo=$5 i
	rm -f /tmp/"$tag".*
	for ((i = 0; i < n; i++)); do
		(
			start=$(cut -d' ' -f1 /proc/uptime)
			rc=0
			taskset -c "$cpu" sg_raw -t "$tmo" -r 65536 -o /dev/null "$sg" \
				28 00 00 00 "$(printf %02x $((i >> 1)))" "$(printf %02x $(((i & 1) << 7)))" 00 00 80 00 \
				> /tmp/"$tag".$i.out 2>&1 || rc=$?
			echo "$rc $start $(cut -d' ' -f1 /proc/uptime)" > /tmp/"$tag".$i.rc
		) &
	done
}
burst_wait() {  # TAG COUNT LIMIT_S: waits until every command of the burst ended
	local t
	for ((t = 0; t < $3 * 10; t++)); do
		[ "$(count_matches /tmp/"$1".*.rc)" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "$1: $(count_matches /tmp/"$1".*.rc) of $2 commands ended within $3 s"
}
burst_count() {  # TAG PATTERN: commands whose sg_raw output matches
	grep -lis "$2" /tmp/"$1".*.out | wc -l
}
burst_ok() { grep -l '^0 ' /tmp/"$1".*.rc 2>/dev/null | wc -l; }

# --- 1. qfull and reclaim on every queue ----------------------------------
qfull_run() {
	local nq=$1 name=qf$1 bs sd pid q runs
	bs=$(MQ_BACKSTORE_CONTROL="max_data_area_mb=1" create_mq_backstore "$name" "$nq" "$size")
	start_client "$name" "$size" "$LOGS/$name.log"
	pid=$CLIENT_PID
	sd=$(export_served "$bs" "$pid" "$LOGS/$name.log")
	local before=()
	for ((q = 0; q < nq; q++)); do before[q]=$(kcount "$name's cmdr queue $q "); done
	log "$name: fio crc32c write+verify, 8 jobs x 2 MiB, bs 64k, iodepth 16"
	fio_checked "$name: write+verify" 16M --name="$name" --filename="$sd" --direct=1 \
		--ioengine=libaio --iodepth=16 --rw=randwrite --bs=64k --numjobs=8 --size=2M \
		--offset_increment=2M --cpus_allowed="0-$(($(nproc) - 1))" \
		--cpus_allowed_policy=split --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--group_reporting
	for ((q = 0; q < nq; q++)); do
		runs=$(( $(kcount "$name's cmdr queue $q ") - before[q] ))
		log "$name: queue $q ran its qfull list $runs times"
		if [ "$q" -lt "$(nproc)" ]; then
			[ "$runs" -gt 0 ] || fail "$name: queue $q never had commands waiting for data space"
		else
			expect_eq "$runs" 0 "$name: qfull runs of queue $q, which no CPU maps to"
		fi
	done
	remove_all_targets
	wait_client "$pid" "$LOGS/$name.log"
	check_queues_used "$LOGS/$name.log" "$nq"
}
if [[ $parts == *" qfull "* ]]; then
	qfull_run 2
	qfull_run 4
fi

# --- 2. per-queue timeouts: queue 1 stalled --------------------------------
stall_part() {
	# 512 KiB of data blocks per queue: 8 READs of 64 KiB fill queue 1's share.
	bs=$(MQ_BACKSTORE_CONTROL="max_data_area_mb=1" MQ_BACKSTORE_ATTRS="qfull_time_out=3" \
		create_mq_backstore stall 2 "$size" 8)
	start_client stall "$size" "$LOGS/stall.log" --stall-queue 1
	pid=$CLIENT_PID
	sd=$(export_served "$bs" "$pid" "$LOGS/stall.log")
	sg=$(sg_of "$sd")
	toggle_stall "$pid" "$LOGS/stall.log" held
	t0=$(cut -d' ' -f1 /proc/uptime)
	read_burst "$sg" 1 12 stall 20
	# Queue 0 keeps serving while queue 1 is stuck.
	fio_checked "stall: queue 0 write+verify while queue 1 is stalled" 4M --name=q0 \
		--filename="$sd" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bs=4k \
		--size=4M --offset=32M --cpus_allowed=0 --verify=crc32c --do_verify=1 --verify_fatal=1
	t_q0=$(cut -d' ' -f1 /proc/uptime)
	burst_wait stall 12 60
	client_stats "$pid" "$LOGS/stall.log"
	held=$(client_field "$LOGS/stall.log" 1 held)
	log "stall: queue 0 verify done after $(awk "BEGIN {print $t_q0 - $t0}") s; queue 1 holds $held commands;" \
		"burst: $(burst_ok stall) good, $(burst_count stall 'check condition') CHECK CONDITION," \
		"$(burst_count stall 'task set full') TASK SET FULL"
	[ "$held" -gt 0 ] || fail "stall: queue 1 received none of the READs from CPU 1"
	expect_eq "$(burst_count stall 'check condition')" "$held" "stall: commands timed out in queue 1's ring (CHECK CONDITION)"
	# The rest waited for data space: requeued by the midlayer, each either
	# ended on queue 0 or gave up with TASK SET FULL.
	expect_eq "$(( $(burst_ok stall) + $(burst_count stall 'task set full') ))" "$((12 - held))" \
		"stall: READs that waited for data space, good or TASK SET FULL"
	[ "$(kcount 'stall queue 1 cmd timeout has expired')" -gt 0 ] || fail "stall: queue 1's cmd_time_out never fired"
	[ "$(kcount 'stall queue 1 qfull timeout has expired')" -gt 0 ] || fail "stall: queue 1's qfull_time_out never fired"
	expect_eq "$(kcount 'stall queue 0 .* timeout has expired')" 0 "stall: timeouts on queue 0"
	toggle_stall "$pid" "$LOGS/stall.log" released
	fio_verify_jobs stall-after "$sd" 4 16
	client_stats "$pid" "$LOGS/stall.log"
	expect_eq "$(client_field "$LOGS/stall.log" 1 held)" 0 "stall: commands queue 1 still holds"
	remove_all_targets
	wait_client "$pid" "$LOGS/stall.log"
	check_queues_used "$LOGS/stall.log" 2
}
if [[ $parts == *" stall "* ]]; then stall_part; fi

# --- 3. LUN reset with commands held on queue 1 ----------------------------
tmr_part() {
	bs=$(MQ_BACKSTORE_ATTRS="tmr_notification=1" create_mq_backstore tmr 2 "$size" 60)
	start_client tmr "$size" "$LOGS/tmr.log" --stall-queue 1
	pid=$CLIENT_PID
	sd=$(export_served "$bs" "$pid" "$LOGS/tmr.log")
	sg=$(sg_of "$sd")
	toggle_stall "$pid" "$LOGS/tmr.log" held
	read_burst "$sg" 1 6 tmr 60
	end=$((SECONDS + 30))
	while [ $SECONDS -lt $end ]; do
		client_stats "$pid" "$LOGS/tmr.log"
		[ "$(client_field "$LOGS/tmr.log" 1 held)" = 6 ] && break
		sleep 0.2
	done
	expect_eq "$(client_field "$LOGS/tmr.log" 1 held)" 6 "tmr: READs queue 1 holds before the reset"
	log "tmr: LUN reset with 6 commands held on queue 1"
	sg_reset -d "$sg" > /tmp/sg_reset.out 2>&1 &
	reset_pid=$!
	end=$((SECONDS + 20))
	while [ $SECONDS -lt $end ]; do
		client_stats "$pid" "$LOGS/tmr.log"
		[ "$(client_field "$LOGS/tmr.log" 1 tmr)" -ge 1 ] && [ "$(client_field "$LOGS/tmr.log" 0 tmr)" -ge 1 ] && break
		sleep 0.2
	done
	# Released before judging, so that a failure does not leave the reset
	# and the teardown waiting for cmd_time_out.
	toggle_stall "$pid" "$LOGS/tmr.log" released
	expect_eq "$(client_field "$LOGS/tmr.log" 1 tmr)" 1 "tmr: TMR entries on queue 1"
	expect_eq "$(client_field "$LOGS/tmr.log" 1 tmr_ids)" 6 "tmr: aborted ids listed on queue 1"
	expect_eq "$(client_field "$LOGS/tmr.log" 0 tmr)" 1 "tmr: TMR entries on queue 0"
	expect_eq "$(client_field "$LOGS/tmr.log" 0 tmr_ids)" 0 "tmr: aborted ids listed on queue 0"
	rc=0
	wait "$reset_pid" || rc=$?
	cat /tmp/sg_reset.out
	expect_eq "$rc" 0 "tmr: sg_reset -d exit status"
	burst_wait tmr 6 30
	log "tmr: reset done; burst: $(burst_ok tmr) good of 6"
	fio_verify_jobs tmr-after "$sd" 4 16
	remove_all_targets
	wait_client "$pid" "$LOGS/tmr.log"
	check_queues_used "$LOGS/tmr.log" 2
}
if [[ $parts == *" tmr "* ]]; then tmr_part; fi

# --- 4. an unopened queue: no commands for it, and global reclaim ----------
partial_part() {
	local bs sd pid sg gmax=/sys/module/target_core_user/parameters/global_max_data_area_mb
	local old_gmax
	old_gmax=$(cat $gmax)
	bs=$(MQ_BACKSTORE_CONTROL="max_data_area_mb=4" create_mq_backstore partial 2 "$size" 5)
	start_client partial "$size" "$LOGS/partial.log" --serve-queues 1
	pid=$CLIENT_PID
	sd=$(export_served "$bs" "$pid" "$LOGS/partial.log")
	sg=/dev/$(ls "/sys/block/$(basename "$sd")/device/scsi_generic")
	# Queue 0 takes pages: 32 writes of 64 KiB at once from CPU 0 fill its
	# 2 MiB share (pages stay allocated until a reclaim).
	fio --name=partial-q0 --filename="$sd" --direct=1 --ioengine=libaio --iodepth=32 \
		--rw=write --bs=64k --size=4M --cpus_allowed=0 > /tmp/partial-q0.fio 2>&1 ||
		{ tail -n 20 /tmp/partial-q0.fio; fail "partial: writes on queue 0"; }
	# From CPU 1, whose queue nobody serves: on queue 0, well inside the
	# 5 s cmd_time_out.
	read_burst "$sg" 1 4 partial 60
	burst_wait partial 4 4
	expect_eq "$(burst_ok partial)" 4 "partial: READs from CPU 1 that succeeded"
	fio_checked "partial: write+verify from CPU 1" 4M --name=partial-q1 --filename="$sd" \
		--direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bs=64k --size=4M \
		--offset=8M --cpus_allowed=1 --verify=crc32c --do_verify=1 --verify_fatal=1
	client_stats "$pid" "$LOGS/partial.log"
	grep -q "^stats queue 1:" "$LOGS/partial.log" &&
		fail "partial: the client reports a queue 1 it was told not to open"
	local before
	before=$(kcount "from partial queue 1")
	log "partial: global_max_data_area_mb $old_gmax -> 1 (reclaim over both queues)"
	echo 1 > $gmax
	for _ in $(seq 100); do
		[ "$(kcount "from partial queue 1")" -gt "$before" ] && break
		sleep 0.1
	done
	[ "$(kcount "from partial queue 1")" -gt "$before" ] ||
		fail "partial: the reclaim never reached queue 1 ($(kcount "from partial queue 0") lines for queue 0)"
	log "partial: reclaim passed queue 1: $(grep "from partial queue 1" "$kmsg" | tail -n1)"
	echo "$old_gmax" > $gmax
	remove_all_targets
	wait_client "$pid" "$LOGS/partial.log"
}
if [[ $parts == *" partial "* ]]; then partial_part; fi

dyndbg -p
errors=$(kernel_ring_errors kmod-mq-pressure | grep -v 'timed out' || true)
[ -z "$errors" ] || fail "kernel ring errors: $errors"
log "kmod-mq-pressure passed"
