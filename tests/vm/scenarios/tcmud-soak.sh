# SPDX-License-Identifier: GPL-2.0-or-later
# Soak (not in CI; scripts/soak.sh runs it): tcmud SIGKILLed at random points
# and restarted, over and over, under write+verify passes on one disk, for
# the scenario's time limit less 5 minutes (set up, last pass, tear down).
# Every restart must take the disk over; every pass must verify. Ends with
# one summary line, also when it fails.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
duration=$((${TCMUD_SCENARIO_TIMEOUT:-600} - 300))
[ "$duration" -ge 60 ] || duration=60
fio_log=/tmp/soak.fio.log
soak_summary() {
	local rc=$? takeovers passes errors verify=passed
	takeovers=$(grep -c "soak0: taken over" "$TCMUD_LOG" 2>/dev/null || true)
	passes=$(grep -c "write+verify of .* passed" $fio_log 2>/dev/null || true)
	errors=$(grep -c "io_u error\|verify: bad\|FAIL" $fio_log 2>/dev/null || true)
	[ "$rc" -eq 0 ] && [ "$errors" -eq 0 ] || verify=FAILED
	echo "soak summary: ${duration} s, $tcmud_kills kills, $takeovers take-overs," \
		"$passes write+verify passes, $errors fio errors, verify $verify"
	return "$rc"
}
trap 'soak_summary; cleanup_scenario' EXIT

load_target_stack
start_tcmud
truncate -s 128M /tmp/soak.img
bs=$(create_user_backstore soak0 file /tmp/soak.img $((128 << 20)))
echo 60 > "$bs/attrib/cmd_time_out"
dev=$(export_via_loop "$bs")

log "soak: SIGKILL and restart under write+verify for $duration s"
fio_verify_loop "$dev" 32M /tmp/soak.stop >$fio_log 2>&1 & io=$!
end=$(($(date +%s) + duration))
while [ "$(date +%s)" -lt "$end" ]; do
	kill_and_restart_tcmud 1 soak0 $io
done
touch /tmp/soak.stop
wait $io || { tail -20 $fio_log; fail "fio saw an error during the soak"; }
tail -1 $fio_log
