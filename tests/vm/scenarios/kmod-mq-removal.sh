# SPDX-License-Identifier: GPL-2.0-or-later
# Multi-queue TCMU teardown under load, on the patched modules (--kmod,
# --smp 4):
#  1. removal: fio runs on a 4-queue device; the LUN is unlinked and the
#     backstore removed mid-I/O. fio must end (with errors), the client must
#     see the device go and exit with every received command completed.
#  2. kill: fio write+verify runs on a 4-queue device (cmd_time_out 5 s);
#     the client is SIGKILLed mid-I/O. fio must end (with errors, the kernel
#     times the commands out); then block_dev + reset_ring + a new client on
#     the same device, and a fio write+verify there must pass.
#  3. a new device after all this works (fio write+verify).
# Each step fails on a client count mismatch, a broken ring in the kernel
# log or a hang; the VM verdict fails on any oops, WARN or hung task.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/kmod-client/vm-lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
load_target_stack
cpus=$(nproc)
size=$((64 << 20))

# fio_background NAME DEV EXTRA...: fio with 4 jobs over every CPU, in the
# background, limited to 120 s; sets FIO_PID.
fio_background() {
	local name=$1 dev=$2
	shift 2
	timeout -k 5 120 fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio \
		--iodepth=16 --numjobs=4 --cpus_allowed="0-$((cpus - 1))" \
		--cpus_allowed_policy=split --group_reporting "$@" >"/tmp/$name.fio" 2>&1 &
	FIO_PID=$!
}

# fio_must_end_with_errors NAME: fio ended on its own (not by the 120 s
# limit) and reported the I/O errors it should have seen.
fio_must_end_with_errors() {
	local rc=0
	wait "$FIO_PID" || rc=$?
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then fail "$1: fio hung (still running after 120 s)"; fi
	[ "$rc" != 0 ] || fail "$1: fio saw no error although its device went away"
	log "$1: fio ended with status $rc: $(grep -m1 -oE 'err=[ ]*[0-9]+[^:]*' "/tmp/$1.fio" || echo '?')"
}

lun_of() { echo "$TARGET"/loopback/naa.*/tpgt_1/lun/lun_0/"$1"; }

step_removal() {
	local bs sd pid
	bs=$(create_mq_backstore rm0 4 "$size")
	start_client rm0 "$size" "$LOGS/rm0.log"
	pid=$CLIENT_PID
	sd=$(export_served "$bs" "$CLIENT_PID" "$LOGS/rm0.log")
	fio_background rm0 "$sd" --rw=randrw --bsrange=4k-64k --size=16M \
		--offset_increment=16M --time_based --runtime=100
	sleep 8
	log "removal: unlinking the LUN and removing the backstore under fio"
	rm -f "$(lun_of rm0)"
	remove_all_targets
	fio_must_end_with_errors rm0
	wait_client "$pid" "$LOGS/rm0.log"
	grep -E '^final total' "$LOGS/rm0.log" | grep -qv 'received=0 ' ||
		fail "removal: the client served nothing before the removal"
}

step_kill() {
	local bs sd
	bs=$(create_mq_backstore kill0 4 "$size" 5)
	start_client kill0 "$size" "$LOGS/kill0.log"
	sd=$(export_served "$bs" "$CLIENT_PID" "$LOGS/kill0.log")
	fio_background kill0 "$sd" --rw=randwrite --bsrange=4k-64k --size=16M \
		--offset_increment=16M --verify=crc32c --do_verify=1 --loops=20
	sleep 8
	log "kill: SIGKILL to the client under fio"
	kill -9 "$CLIENT_PID"
	wait "$CLIENT_PID" 2>/dev/null || true
	fio_must_end_with_errors kill0
	log "kill: block_dev, reset_ring, and a new client on the same device"
	echo 1 > "$bs/action/block_dev"
	echo 1 > "$bs/action/reset_ring"
	echo 0 > "$bs/action/block_dev"
	start_client kill0 "$size" "$LOGS/kill0b.log"
	fio_verify_jobs kill0b "$sd" 4 32
	remove_all_targets
	wait_client "$CLIENT_PID" "$LOGS/kill0b.log"
	check_queues_used "$LOGS/kill0b.log" 4
}

step_new_device() {
	local bs sd
	bs=$(create_mq_backstore new0 2 "$size")
	start_client new0 "$size" "$LOGS/new0.log"
	sd=$(export_served "$bs" "$CLIENT_PID" "$LOGS/new0.log")
	fio_verify_jobs new0 "$sd" 4 32
	remove_all_targets
	wait_client "$CLIENT_PID" "$LOGS/new0.log"
	check_queues_used "$LOGS/new0.log" 2
}

step_removal
step_kill
step_new_device
errors=$(kernel_ring_errors kmod-mq-removal)
[ -z "$errors" ] || fail "kernel ring errors: $errors"
log "kmod-mq-removal passed"
