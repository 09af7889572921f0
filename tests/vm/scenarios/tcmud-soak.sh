# SPDX-License-Identifier: GPL-2.0-or-later
# Soak (not in CI; scripts/soak.sh runs it), issue 14 deliverable 5: for the
# scenario's time limit less 5 minutes (set-up, last pass, tear-down), one
# disrupting action after another, picked at random, while fio write+verify
# passes run on the main LUN without a break:
#   kill     tcmud SIGKILLed and restarted; it must take every device over
#   term     tcmud stopped with SIGTERM (drain, exit 0) and restarted
#   lun      a LUN added, written and verified, and removed again
#   resize   the main LUN grown by 1 MiB (RECONFIG dev_size) under I/O
#   reset    action/reset_ring on the main LUN under I/O (in-flight
#            commands are answered BUSY and retried)
#   fault    a side LUN's dm table swapped to "error" and back under
#            acknowledged writes; every acknowledged block reads back
# Every fio pass must verify, and the side LUN's acknowledged writes too.
# Ends with one summary line, also when it fails.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
duration=$((${TCMUD_SCENARIO_TIMEOUT:-600} - 300))
[ "$duration" -ge 60 ] || duration=60
fio_log=/tmp/soak.fio.log
ack="python3 $TCMUD_SRC/tests/vm/guest/ack-io.py"
declare -A done_count=([kill]=0 [term]=0 [lun]=0 [resize]=0 [reset]=0 [fault]=0)
actions=(kill term lun resize reset fault)

soak_summary() {
	local rc=$1 passes errors verify=passed a counts=""
	passes=$(grep -c "write+verify of .* passed" $fio_log 2>/dev/null || true)
	errors=$(grep -c "io_u error\|verify: bad\|FAIL" $fio_log 2>/dev/null || true)
	[ "$rc" -eq 0 ] && [ "$errors" -eq 0 ] || verify=FAILED
	for a in "${actions[@]}"; do counts+="${counts:+, }$a ${done_count[$a]}"; done
	echo "soak summary: ${duration} s, $cycles cycles ($counts), $passes write+verify" \
		"passes, $errors fio errors, $side_acked side-LUN blocks acknowledged, verify $verify"
}
cycles=0 side_acked=0
finish() {
	local rc=$?
	set +e
	soak_summary $rc
	touch /tmp/soak.stop
	remove_all_targets 2>/dev/null
	dmsetup remove tcmud-soakdm 2>/dev/null
	[ -n "${loop:-}" ] && losetup -d "$loop" 2>/dev/null
	cleanup_scenario $rc
}
trap finish EXIT

load_target_stack
modprobe dm_mod
modprobe loop
start_tcmud
M=$((1 << 20))
size=$((128 * M))
truncate -s $size /tmp/soak.img
bs=$(create_user_backstore soak0 file "/tmp/soak.img;extend=1" $size)
echo 60 > "$bs/attrib/cmd_time_out"
dev=$(export_via_loop "$bs")

truncate -s 16M /tmp/soakdm.img
loop=$(losetup -f --show /tmp/soakdm.img)
linear="0 $((16 << 11)) linear $loop 0"
echo "$linear" | dmsetup create tcmud-soakdm
dm=/dev/dm-$(dmsetup info -c --noheadings -o minor tcmud-soakdm | tr -d ' ')
side=$(export_via_loop "$(create_user_backstore side0 file "$dm;block;direct=1" $((16 * M)))")
rm -f /tmp/soak.stop
: > /tmp/side.acked

# taken_over NAME: how many times the log says NAME was taken over.
taken_over() { grep -c "$1: taken over" "$TCMUD_LOG" || true; }

act_kill() { kill_and_restart_tcmud 1 soak0 "$io"; }
act_term() {
	local before rc=0
	before=$(taken_over soak0)
	kill -TERM "$TCMUD_PID"
	wait "$TCMUD_PID" || rc=$?
	expect_eq "$rc" 0 "tcmud's exit status after SIGTERM"
	start_tcmud
	expect_eq "$(taken_over soak0)" $((before + 1)) "take-overs of soak0 after SIGTERM"
}
act_lun() {
	local n=$((done_count[lun] + 1)) xbs x
	truncate -s 8M "/tmp/extra$n.img"
	xbs=$(create_user_backstore "extra$n" file "/tmp/extra$n.img" $((8 * M)))
	x=$(export_via_loop "$xbs")
	fio_write_verify "$x" 2M > /dev/null
	remove_lun "$xbs"
	rm -f "/tmp/extra$n.img"
}
act_resize() {
	size=$((size + M))
	echo $size > "$bs/attrib/dev_size" || fail "growing soak0 to $size was refused"
	expect_eq "$(cat "$bs/attrib/dev_size")" $size "soak0's dev_size"
}
act_reset() { echo 1 > "$bs/action/reset_ring"; }
act_fault() {
	local out first=$((RANDOM % 3000))
	echo "0 $((16 << 11)) error" | dmsetup load tcmud-soakdm
	dmsetup suspend tcmud-soakdm && dmsetup resume tcmud-soakdm
	out=$($ack write "$side" "$first" 4 /tmp/side.acked)
	expect_match "$out" "^acked 0 failed 4" "writes to the failing side LUN"
	echo "$linear" | dmsetup load tcmud-soakdm
	dmsetup suspend tcmud-soakdm && dmsetup resume tcmud-soakdm
	out=$($ack write "$side" "$first" 4 /tmp/side.acked)
	expect_match "$out" "^acked 4 failed 0" "writes to the side LUN once healthy"
	out=$($ack verify "$side" /tmp/side.acked) || fail "side LUN: $out"
	side_acked=$(sort -u /tmp/side.acked | wc -l)
}

# remove_lun BACKSTORE_DIR: unexports and deletes one backstore, leaving the
# others alone (remove_all_targets removes everything).
remove_lun() {
	local link tpg t
	link=$(find "$TARGET"/loopback -maxdepth 5 -lname "*$(basename "$1")" | head -1)
	[ -n "$link" ] || fail "no LUN links $1"
	tpg=${link%/lun/*}
	t=${tpg%/*}
	rm -f "$link"
	rmdir "$(dirname "$link")"
	echo NULL > "$tpg/nexus" 2>/dev/null || true
	rmdir "$tpg" "$t"
	rmdir "$1"
}

log "soak: $duration s of ${actions[*]} under write+verify"
fio_verify_loop "$dev" 32M /tmp/soak.stop >$fio_log 2>&1 & io=$!
end=$(($(date +%s) + duration))
while [ "$(date +%s)" -lt "$end" ]; do
	a=${actions[RANDOM % ${#actions[@]}]}
	kill -0 "$io" 2>/dev/null || fail "write+verify ended before cycle $((cycles + 1))"
	"act_$a"
	done_count[$a]=$((done_count[$a] + 1))
	cycles=$((cycles + 1))
	log "cycle $cycles: $a"
	sleep "0.$((RANDOM % 10))"
done
touch /tmp/soak.stop
wait $io || { tail -20 $fio_log; fail "fio saw an error during the soak"; }
tail -1 $fio_log
out=$($ack verify "$side" /tmp/side.acked 2>&1) || fail "side LUN at the end: $out"
kill -0 "$TCMUD_PID" || fail "tcmud died"
