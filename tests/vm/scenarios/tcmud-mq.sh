# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud on the patched modules (run with --kmod): it detects the multi-queue
# ABI and serves a device with one worker per queue, each woken by its own
# eventfd and placed by queue_cpus=auto (worker q on CPU q when N > 1). For
# nr_queues = 1, 2 and 4, on one device each:
#  - SIGKILL + restart during write+verify: the restarted daemon takes the
#    device over (ring reset, BUSY retried) and the verify passes;
#  - the transfer limit follows each queue's share of a 16 MiB data area
#    (4 MiB per queue at N = 4: 8192 blocks in VPD 0xb0), else the cap;
#  - the sg3_utils checks of tcmud-scsi (tests/vm/guest/scsi-checks.sh);
#  - fio crc32c write+verify with 4 jobs (8 MiB each);
#  - COMPARE AND WRITE atomicity across queues: CPUs 0 and 1 each increment
#    one block's counter through read + CAW; no increment may be lost;
#  - a LUN reset (sg_reset -d) with tmr_notification=1: the kernel puts a
#    TMR entry on queue 0 and tcmud's worker 0 handles it;
#  - at removal, each queue's worker logs its counts: every queue a CPU maps
#    to (the kernel steers CPU c to queue c % N) served commands, the others
#    none.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/scsi-checks.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "needs the patched modules (tests/vm/run --kmod DIR)"
load_target_stack
start_tcmud
cpus=$(nproc)
[ "$cpus" -ge 2 ] || skip "needs at least 2 vCPUs (the CAW race runs on CPUs 0 and 1)"

# caw_increment DEV CPU COUNT: COUNT successful read-then-CAW increments of
# the decimal counter in LBA 100, issued from CPU (so through queue CPU % N).
caw_increment() {
	local dev=$1 cpu=$2 want=$3 done=0 cur
	while [ $done -lt "$want" ]; do
		cur=$(dd if="$dev" bs=512 skip=100 count=1 iflag=direct status=none | tr -d '\0')
		{ printf '%s' "$cur" | dd bs=512 conv=sync status=none
		  printf '%s' $((cur + 1)) | dd bs=512 conv=sync status=none; } > "/tmp/caw.$cpu"
		if taskset -c "$cpu" sg_compare_and_write --in="/tmp/caw.$cpu" --lba=100 --num=1 \
			"$dev" >/dev/null 2>&1; then
			done=$((done + 1))
		fi
	done
}

# check_placement NAME N: the device logged where each worker runs.
check_placement() {
	local name=$1 n=$2 line q want
	line=$(grep "$name: placement auto" "$TCMUD_LOG" | tail -1) \
		|| fail "$name logged no placement"
	for q in $(seq 0 $((n - 1))); do
		want="queue $q on CPU $((q % cpus))"
		[ "$n" -eq 1 ] && want="queue 0 not pinned"
		expect_match "$line" "$want([,]|$)" "placement of $name"
	done
	log "${line#*: }"
}

for n in 1 2 4; do
	start_s=$(date +%s)
	name=mq$n
	truncate -s 64M /tmp/$name.img
	bs=$(USER_BACKSTORE_ATTRS="nr_queues=$n tmr_notification=1 cmd_time_out=60" \
		USER_BACKSTORE_CONTROL="max_data_area_mb=16" \
		create_user_backstore $name file /tmp/$name.img $((64 << 20)) $name-serial)
	dev=$(export_via_loop "$bs")
	wait_listed "$name" nr_queues "$n"
	max_kb=$((16384 / n < 8192 ? 16384 / n : 8192))
	grep -q "$name: maximum transfer $max_kb KiB (data area $((16384 / n)) KiB per queue" \
		"$TCMUD_LOG" || fail "$name: transfer limit not from its queues' data area"
	expect_match "$(sg_vpd -p 0xb0 "$dev")" "Maximum transfer length: $((max_kb * 2)) blocks" \
		"$name: VPD 0xb0 MAXIMUM TRANSFER LENGTH"
	check_placement $name "$n"

	rm -f /tmp/stop.$name
	fio_verify_loop "$dev" 16M /tmp/stop.$name & io_pid=$!
	kill_and_restart_tcmud 1 $name $io_pid
	touch /tmp/stop.$name
	wait $io_pid || fail "write+verify across a SIGKILL with $n queues"
	check_placement $name "$n"

	sg3_checks "$dev" $name-serial 131071

	fio_checked "write+verify, 4 jobs, $n queues" 32M --name=mq --filename="$dev" \
		--direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bs=4k --numjobs=4 \
		--offset_increment=16M --size=8M --verify=crc32c --do_verify=1 --verify_fatal=1
	log "$n queue(s): write+verify with 4 jobs passed"

	printf 0 | dd of="$dev" bs=512 seek=100 conv=sync oflag=direct status=none
	caw_increment "$dev" 0 10 & a=$!
	caw_increment "$dev" 1 10 & b=$!
	wait $a; wait $b
	final=$(dd if="$dev" bs=512 skip=100 count=1 iflag=direct status=none | tr -d '\0')
	expect_eq "$final" 20 "counter after 2 x 10 COMPARE AND WRITE increments, $n queues"
	log "$n queue(s): CAW from CPUs 0 and 1: 20 increments, none lost"

	before=$(queue_metric "$name" 0 tcmud_task_management_total)
	sg_reset -d "$dev" >/dev/null || fail "sg_reset -d on $dev"
	for _ in $(seq "$(scaled 50)"); do
		after=$(queue_metric "$name" 0 tcmud_task_management_total)
		[ "$after" -gt "$before" ] && break
		sleep 0.1
	done
	[ "$after" -gt "$before" ] || fail "no TMR on queue 0 of $name (tcmudctl metrics)"
	log "$(grep "$name: queue 0: task management" "$TCMUD_LOG" | tail -1)"
	out=$(sg_inq "$dev")
	expect_match "$out" "LIO-ORG" "INQUIRY after the LUN reset"

	remove_all_targets
	for q in $(seq 0 $((n - 1))); do
		line=$(grep "$name: queue $q: stopped after" "$TCMUD_LOG" | tail -1) \
			|| fail "no stop line for queue $q of $name"
		cmds=${line##*after }; cmds=${cmds%% commands*}
		if [ "$q" -lt "$cpus" ]; then
			[ "$cmds" -gt 0 ] || fail "queue $q of $name served no command"
		else
			expect_eq "$cmds" 0 "commands on queue $q of $name, which no CPU maps to"
		fi
		log "$name queue $q: $cmds commands (since the restart)"
	done
	log "nr_queues=$n: $(($(date +%s) - start_s)) s"
done
