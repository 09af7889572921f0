# SPDX-License-Identifier: GPL-2.0-or-later
# Commands that time out and are never completed must be freed whole when
# their device is released (patch 0014), on the patched modules (--kmod).
# Each round: a one-queue device (cmd_time_out 2 s, hw_max_sectors 2048)
# served by tcmu-mq-client until tcm_loop has its disk, then the client is
# SIGKILLed; 64 READs of 1 MiB each go to the disk through SG_IO (sg_raw:
# no retries, so one TCMU command each), nobody answers, all 64 time out
# (EXPIRED, counted by the pr_debug of tcmu_check_expired_ring_cmd), and
# the device is removed. A 1 MiB command has 256 data blocks of 4 KiB, so
# its block index list is a 1 KiB kmalloc(): the kmalloc-1k objects in use
# (after a slab shrink) are compared before and after each round. Without
# 0014 every round leaves 64 of them behind; the scenario fails if the
# measured rounds leave at least half that many.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/kmod-client/vm-lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
command -v sg_raw >/dev/null || skip "no sg_raw (sg3-utils)"
load_target_stack
slab=kmalloc-1k
[ -w "/sys/kernel/slab/$slab/shrink" ] || skip "no /sys/kernel/slab/$slab/shrink"
grep -q "^$slab " /proc/slabinfo || skip "no $slab in /proc/slabinfo"
ddebug=/proc/dynamic_debug/control
[ -w "$ddebug" ] || skip "no $ddebug"
cmds=64 rounds=3 size=$((64 << 20))

# in_use: objects of $slab in use, per-CPU slabs flushed first (SLUB counts
# every object of a CPU's slab as active in /proc/slabinfo otherwise).
in_use() {
	sleep 0.5
	echo 1 > "/sys/kernel/slab/$slab/shrink"
	awk -v s="$slab" '$1 == s { print $2 }' /proc/slabinfo
}

expired_so_far() { dmesg | grep -c 'Timing out inflight cmd' || true; }

# round N: one device, $cmds expired 1 MiB READs, the device removed.
round() {
	local name=leak$1 bs sd pid i rc failed=0 expired0 expired
	bs=$(MQ_BACKSTORE_CONTROL="hw_max_sectors=2048" create_mq_backstore "$name" 1 "$size" 2)
	expect_eq "$(cat "$bs/attrib/hw_max_sectors")" 2048 "$name hw_max_sectors"
	start_client "$name" "$size" "$LOGS/$name.log"
	pid=$CLIENT_PID
	sd=$(export_served "$bs" "$pid" "$LOGS/$name.log")
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	expired0=$(expired_so_far)
	pids=()
	for ((i = 0; i < cmds; i++)); do
		# READ(10), LBA i * 2048, 2048 blocks of 512 bytes: 1 MiB.
		sg_raw -r 1048576 -t 60 "$sd" 28 00 00 "$(printf '%02x' $((i * 8 % 256)))" 00 00 00 08 00 00 \
			>/dev/null 2>"/tmp/$name.$i.err" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		rc=0
		wait "$pid" || rc=$?
		[ "$rc" = 0 ] || failed=$((failed + 1))
	done
	expired=$(($(expired_so_far) - expired0))
	log "round $1: $failed of $cmds READs failed, $expired commands timed out"
	[ "$failed" = "$cmds" ] || { cat "/tmp/$name.0.err"; fail "round $1: $((cmds - failed)) READs succeeded with no daemon"; }
	# The commands must have reached the ring and expired there; a READ
	# refused before (too large, say) would leave nothing to leak.
	[ "$expired" -ge "$cmds" ] || { cat "/tmp/$name.0.err"; fail "round $1: only $expired of $cmds commands timed out on the ring"; }
	remove_all_targets
	[ ! -e "$bs" ] || fail "round $1: $bs still exists"
}

echo "module target_core_user func tcmu_check_expired_ring_cmd +p" > "$ddebug"
# shellcheck disable=SC2154 # rc is assigned by the trap's own text
trap 'rc=$?; echo "module target_core_user func tcmu_check_expired_ring_cmd -p" > "$ddebug"; cleanup_scenario "$rc"' EXIT
start_s=$(cut -d. -f1 /proc/uptime)
# A first round warms up whatever the target stack allocates once.
round 0
total=0
for ((r = 1; r <= rounds; r++)); do
	before=$(in_use)
	round "$r"
	after=$(in_use)
	log "round $r: $slab in use $before -> $after ($((after - before)))"
	total=$((total + after - before))
done
log "$slab: $total objects left after $rounds rounds of $cmds expired 1 MiB commands" \
	"($(($(cut -d. -f1 /proc/uptime) - start_s)) s)"
[ "$total" -lt $((rounds * cmds / 2)) ] ||
	fail "expired commands' block lists leaked: $total $slab objects after $rounds rounds of $cmds"
log "kmod-release-leak passed"
