# SPDX-License-Identifier: GPL-2.0-or-later
# Multi-queue TCMU under parallel load: a device with nr_queues=2 and one
# with nr_queues=4, each served by tcmu-mq-client (one thread per queue,
# each on that queue's own uio device, reverse-order completion), take a
# fio crc32c write+verify with 4 and 8 jobs spread over every vCPU. Passes
# only if queues 1..N-1 have exactly one uio device each
# (tcmu-mq-client checks each one's mailbox names its queue) and they go
# away with the device, the verify passes, every queue a CPU maps to got
# commands and every other queue none and no wakeup (steering is
# CPU % nr_queues: with --smp 2, queues 2 and 3 of the 4-queue device must
# stay idle), every queue completed what it received, and the kernel
# reported no broken ring. Needs --kmod (patched modules); --smp 4 lets
# all four queues work.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/kmod-client/vm-lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
load_target_stack
cpus=$(nproc)
log "guest has $cpus CPUs"
size=$((128 << 20))

# mq_fio NR_QUEUES JOBS: one device, one client, one fio run, then removal.
mq_fio() {
	local nq=$1 jobs=$2 name=mq$1 bs sd pid
	bs=$(create_mq_backstore "$name" "$nq" "$size")
	expect_eq "$(queue_uios 0 "$name" | awk '{print $2}' | sort -n | tr '\n' ' ')" \
		"$(seq 1 $((nq - 1)) | tr '\n' ' ')" "$name: queues with a uio device of their own"
	start_client "$name" "$size" "$LOGS/$name.log"
	pid=$CLIENT_PID
	sd=$(export_served "$bs" "$CLIENT_PID" "$LOGS/$name.log")
	fio_verify_jobs "$name" "$sd" "$jobs" 32
	remove_all_targets
	wait_client "$pid" "$LOGS/$name.log"
	check_queues_used "$LOGS/$name.log" "$nq"
	expect_eq "$(queue_uios 0 "$name")" "" "$name: queue uio devices left after removal"
}

mq_fio 1 2
mq_fio 2 4
mq_fio 4 8
errors=$(kernel_ring_errors kmod-mq-fio)
[ -z "$errors" ] || fail "kernel ring errors: $errors"
log "kmod-mq-fio passed"
