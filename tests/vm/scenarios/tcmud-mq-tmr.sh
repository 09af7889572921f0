# SPDX-License-Identifier: GPL-2.0-or-later
# Task management across queues with tcmud on the patched modules (run with
# --kmod): commands are held in flight on queue 1 while a LUN reset aborts
# them. The backing store is a dm-delay device that holds every read for
# 15 s (tcmud opens it with O_DIRECT), so four READs issued from CPU 1 sit
# in tcmud's queue 1 when sg_reset -d asks for the LUN reset. With
# tmr_notification=1 the kernel puts a TMR entry listing exactly those ids
# (those that reached the ring) on queue 1, and an empty one on queue 0:
# tcmud's worker 1 must find all of them among its commands in flight,
# worker 0 none, and each aborted command is still answered once (the kernel
# would call a second answer a broken ring; a missing one would hang the
# reset). Then, with the delay off, a
# write+verify passes on the same device: both rings go on.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "needs the patched modules (tests/vm/run --kmod DIR)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 vCPUs (the READs go through queue 1 from CPU 1)"
load_target_stack
modprobe loop
modprobe dm_delay
export DM_DISABLE_UDEV=1 # no udev in the guest: dmsetup makes the nodes
size=$((64 << 20))
truncate -s $size /tmp/tmr.img
loop=$(losetup --find --show /tmp/tmr.img)
sectors=$((size / 512))
# delay_reads MS: reads of /dev/mapper/slow wait MS ms; writes never.
delay_reads() {
	local table="0 $sectors delay $loop 0 $1 $loop 0 0"
	if dmsetup info slow >/dev/null 2>&1; then
		dmsetup suspend --noudevsync slow
		dmsetup reload slow --table "$table"
		dmsetup resume --noudevsync slow
	else
		dmsetup create --noudevsync slow --table "$table"
	fi
}
tmr_cleanup() {
	remove_all_targets 2>/dev/null || true
	for pid in "${daemons_to_stop[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
	daemons_to_stop=()
	dmsetup remove --noudevsync slow 2>/dev/null || true
	losetup -d "$loop" 2>/dev/null || true
}
trap 'rc=$?; tmr_cleanup; exit $rc' EXIT
# No delay until the disk is up: the kernel's partition scan reads several
# blocks one after another while it holds the disk's open mutex, so with
# reads held 15 s each, dd could not even open the disk for a minute.
delay_reads 0
start_tcmud
bs=$(USER_BACKSTORE_ATTRS="nr_queues=2 tmr_notification=1 cmd_time_out=60" \
	create_user_backstore tmr file "/dev/mapper/slow;block;direct=1" $size)
dev=$(export_via_loop "$bs")
wait_listed tmr nr_queues 2
blockdev --getsize64 "$dev" >/dev/null # an open waits for the scan to end
delay_reads 15000

tmrs() { queue_metric tmr "$1" tcmud_task_management_total; }
q0_before=$(tmrs 0) q1_before=$(tmrs 1)
aborted_before=$(queue_metric tmr 1 tcmud_aborted_commands_total)
pids=()
for i in 1 2 3 4; do
	# 1 MiB apart, each its own command; O_DIRECT so none is served by the
	# initiator's page cache. dd's own result is the kernel's business (an
	# aborted command of the resetting nexus gets no SCSI status).
	taskset -c 1 dd if="$dev" of=/dev/null bs=4k count=1 skip=$((i * 256)) iflag=direct \
		status=none 2>/dev/null & pids+=($!)
done
# Until worker 1 holds the four READs (its depth in tcmudctl's statistics),
# or 8 s; dm-delay holds each READ for 15 s from its arrival.
ctl="$TCMUD_BUILD/tools/tcmudctl/tcmudctl"
depth=0
for _ in $(seq 40); do
	depth=$("$ctl" stats tmr --json --interval 0.1 | jq '.devices[0].queues[1].depth')
	[ "$depth" -ge 4 ] && break
	sleep 0.1
done
[ "$depth" -ge 1 ] || fail "no READ in flight on queue 1 to reset"
log "$depth READs in flight on queue 1"
start_ns=$(date +%s%N)
sg_reset -d "$dev" >/dev/null || fail "sg_reset -d"
log "LUN reset returned after $((($(date +%s%N) - start_ns) / 1000000)) ms"
for pid in "${pids[@]}"; do wait "$pid" || true; done
expect_eq "$(tmrs 1)" $((q1_before + 1)) "TMRs on queue 1 (tcmudctl metrics)"
expect_eq "$(tmrs 0)" $((q0_before + 1)) "TMRs on queue 0 (tcmudctl metrics)"
aborted=$(($(queue_metric tmr 1 tcmud_aborted_commands_total) - aborted_before))
[ "$aborted" -ge "$depth" ] || fail "queue 1 counted $aborted aborted commands, fewer than the $depth READs"
q1=$(grep "tmr: queue 1: task management LUN_RESET" "$TCMUD_LOG" | tail -1)
q0=$(grep "tmr: queue 0: task management LUN_RESET" "$TCMUD_LOG" | tail -1)
log "${q1#*: }"
log "${q0#*: }"
# "K of L listed commands in flight here": the kernel listed (at least) the
# READs worker 1 held, and every id it listed was one of them.
read -r found listed < <(echo "$q1" | sed -n 's/.* \([0-9]*\) of \([0-9]*\) listed.*/\1 \2/p')
[ "${listed:-0}" -ge "$depth" ] || fail "queue 1's TMR listed fewer than the $depth READs: $q1"
expect_eq "$found" "$listed" "listed commands worker 1 had in flight"
expect_match "$q0" "LUN_RESET: 0 of 0 listed" "queue 0's TMR"

delay_reads 0
fio_write_verify "$dev" 8M
remove_all_targets
for q in 0 1; do
	grep -q "tmr: queue $q: stopped after" "$TCMUD_LOG" || fail "no stop line for queue $q"
done
log "$(grep "tmr: queue 1: stopped after" "$TCMUD_LOG" | tail -1)"
if dmesg | grep -q "ring is broken"; then fail "the kernel called a ring broken"; fi
