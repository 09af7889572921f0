# SPDX-License-Identifier: GPL-2.0-or-later
# The packaged tcmud under systemd, with write+verify I/O running through
# every step (after systemd-tcmud installed it):
# 1. kill -9: systemd restarts it (Restart=on-failure), the new daemon takes
#    the device over;
# 2. systemctl stop drains the commands in flight (as SIGTERM does), the
#    unit's result is success; systemctl start takes the device over;
# 3. a package upgrade (apt, one version higher) restarts it through the
#    maintainer scripts and the take-over;
# 4. the watchdog: a queue worker stalled on purpose (test hook) stops the
#    WATCHDOG=1 pings; systemd kills and restarts tcmud, which takes over.
# fio sees no error across all of it.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/systemd-lib.sh"
load_target_stack
dpkg -s tcmud > /dev/null 2>&1 || fail "the tcmud package is not installed (run systemd-tcmud first)"
pid=$(wait_tcmud_active)
log "tcmud $pid active; creating faults0"
truncate -s 128M $STATE/faults.img
bs=$(create_user_backstore faults0 file $STATE/faults.img $((128 << 20)))
# Longer than the watchdog's worst case (20 s without a ping + a 10 s tick
# + restart), so the commands held by the stalled worker are retried, not
# failed.
echo 90 > "$bs/attrib/cmd_time_out"
dev=$(export_via_loop "$bs")
wait_journal 'file/faults0: ' 1
log "faults0 is $dev; write+verify in the background"
fio_verify_loop "$dev" 16M /tmp/faults.stop & io=$!
sleep 2
kill -0 $io 2>/dev/null || fail "fio ended before the faults began"
takeovers=$(journal_count 'file/faults0: taken over')

# next_takeover OLD_PID WHAT: waits for a new main PID and one more take-over.
next_takeover() {
	pid=$(wait_tcmud_active "$1")
	takeovers=$((takeovers + 1))
	wait_journal 'file/faults0: taken over' $takeovers
	kill -0 $io 2>/dev/null || fail "fio ended during $2"
	log "$2: tcmud $1 -> $pid, faults0 taken over"
}

log "1: kill -9"
restarts=$(systemctl show -p NRestarts --value tcmud)
kill -9 "$pid"
next_takeover "$pid" "kill -9"
expect_eq "$(systemctl show -p NRestarts --value tcmud)" $((restarts + 1)) "NRestarts after kill -9"

log "2: systemctl stop under I/O"
drains=$(journal_count 'file/faults0: queue 0: drained: [0-9]+ commands in flight finished, none left unanswered')
t0=$(date +%s%N)
systemctl stop tcmud
log "stopped in $((($(date +%s%N) - t0) / 1000000)) ms"
expect_eq "$(systemctl show -p Result --value tcmud)" success "tcmud's result after stop"
expect_eq "$(journal_count 'file/faults0: queue 0: drained: [0-9]+ commands in flight finished, none left unanswered')" \
	$((drains + 1)) "drain lines after systemctl stop"
expect_eq "$(cat "$bs/enable")" 1 "faults0 enabled after tcmud stopped"
systemctl start tcmud
next_takeover "$pid" "systemctl stop + start"

log "3: package upgrade under I/O"
up=$(ls "$TCMUD_DEBS"/upgrade/tcmud_*_amd64.deb)
apt_local install "$up" > $STATE/apt-upgrade.log 2>&1 ||
	{ cat $STATE/apt-upgrade.log; fail "apt upgrade to $(basename "$up")"; }
expect_match "$(dpkg-query -W -f '${Version}' tcmud)" 'upgradetest1$' "tcmud's version after the upgrade"
next_takeover "$pid" "upgrade to $(dpkg-query -W -f '${Version}' tcmud)"

log "4: watchdog with a stalled queue worker"
mkdir -p /run/systemd/system/tcmud.service.d
printf '[Service]\nEnvironment=TCMUD_TEST_HOOKS=1\n' > /run/systemd/system/tcmud.service.d/test-hooks.conf
systemctl daemon-reload
systemctl restart tcmud
next_takeover "$pid" "restart with the test hook"
restarts=$(systemctl show -p NRestarts --value tcmud)
t0=$(date +%s)
kill -USR1 "$pid"
wait_journal 'file/faults0: queue 0: stalled on purpose' 1
next_takeover "$pid" "watchdog restart"
log "tcmud was killed, restarted and had taken faults0 over $(( $(date +%s) - t0 )) s after the stall"
journalctl -b -u tcmud -o cat --no-pager | grep -q 'Watchdog timeout' ||
	fail "systemd did not log a watchdog timeout"
grep -q 'its worker has not run' <(journalctl -b -u tcmud -o cat --no-pager) ||
	fail "tcmud did not log the silent worker"
# Each line has its priority (the "<N>" prefix on stderr): the error is in
# `journalctl -p err`, and nothing below it is.
errors=$(journalctl -b -u tcmud -p err -o cat --no-pager)
grep -q 'tcmud error: file/faults0: queue 0: its worker has not run' <<< "$errors" ||
	fail "journalctl -p err does not show the silent worker's error: $(tail -n 3 <<< "$errors")"
grep -qE '^tcmud (warn|info|debug):' <<< "$errors" &&
	fail "journalctl -p err shows lines below err: $(grep -m1 -E '^tcmud (warn|info|debug):' <<< "$errors")"
log "journalctl -p err: $(grep -m1 'its worker has not run' <<< "$errors")"
expect_eq "$(systemctl show -p NRestarts --value tcmud)" $((restarts + 1)) "NRestarts after the watchdog"
rm -rf /run/systemd/system/tcmud.service.d
systemctl daemon-reload

touch /tmp/faults.stop
wait $io || fail "fio saw an error"
log "write+verify passed across kill -9, stop/start, an upgrade and a watchdog restart"
