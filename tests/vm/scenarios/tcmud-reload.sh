# SPDX-License-Identifier: GPL-2.0-or-later
# SIGHUP reloads tcmud.conf without touching I/O: a device added after the
# reload is opened with the new max_in_flight and uring_entries, the one
# served before keeps its rings (and keeps verifying through the reload),
# and a reload of a broken file changes nothing. State is read from
# tcmudctl's JSON, not from log wording. Also: log_dir's default.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
conf=/tmp/tcmud-reload.conf
printf 'max_in_flight = 64\nuring_entries = 128\n' > "$conf"
# No log_dir in either file: the log goes to /var/log/tcmud.log as well
# (the file logrotate rotates and a purge removes), not to stderr alone.
readies=$(grep -c "ready, serving" /var/log/tcmud.log 2>/dev/null || true)
start_tcmud -c "$conf"
now=$(grep -c "ready, serving" /var/log/tcmud.log 2>/dev/null || true)
[ "${now:-0}" -gt "${readies:-0}" ] ||
	fail "no ready line in /var/log/tcmud.log: log_dir's default not applied"
ctl="$TCMUD_BUILD/tools/tcmudctl/tcmudctl"
# sizes NAME -> "max_in_flight uring_entries" of that served device
sizes() {
	"$ctl" list --json | jq -r --arg n "$1" \
		'.devices[] | select(.name == $n) | "\(.max_in_flight) \(.uring_entries)"'
}
truncate -s 64M /tmp/r1.img /tmp/r2.img /tmp/r3.img
d1=$(export_via_loop "$(create_user_backstore reload1 file /tmp/r1.img $((64 << 20)))")
expect_eq "$(sizes reload1)" "64 128" "reload1 before any reload"

# The reload lands while reload1 runs write+verify passes.
rm -f /tmp/reload.stop
fio_verify_loop "$d1" 8M /tmp/reload.stop & pf=$!
printf 'max_in_flight = 32\nuring_entries = 64\n' > "$conf"
reloads=$(grep -c "configuration reloaded" "$TCMUD_LOG" || true)
kill -HUP "$TCMUD_PID"
for _ in $(seq 100); do
	[ "$(grep -c "configuration reloaded" "$TCMUD_LOG" || true)" -gt "$reloads" ] && break
	sleep 0.1
done
[ "$(grep -c "configuration reloaded" "$TCMUD_LOG" || true)" -gt "$reloads" ] \
	|| fail "no reload after SIGHUP"
d2=$(export_via_loop "$(create_user_backstore reload2 file /tmp/r2.img $((64 << 20)))")
expect_eq "$(sizes reload2)" "32 64" "reload2, added after the reload"
expect_eq "$(sizes reload1)" "64 128" "reload1 keeps its rings"
fio_write_verify "$d2" 16M || fail "write+verify on the device added after the reload"

# A broken file: refused with file:line, the running settings stay, and a
# device added afterwards still gets them.
printf 'max_in_flight = 32\nuring_entries = lots\n' > "$conf"
refusals=$(grep -c "configuration not reloaded" "$TCMUD_LOG" || true)
kill -HUP "$TCMUD_PID"
for _ in $(seq 100); do
	[ "$(grep -c "configuration not reloaded" "$TCMUD_LOG" || true)" -gt "$refusals" ] && break
	sleep 0.1
done
grep -q "$conf:2:" "$TCMUD_LOG" || fail "no file:line for the bad value"
kill -0 "$TCMUD_PID" || fail "tcmud died on a bad reload"
d3=$(export_via_loop "$(create_user_backstore reload3 file /tmp/r3.img $((64 << 20)))")
expect_eq "$(sizes reload3)" "32 64" "reload3, added after a refused reload"
fio_write_verify "$d3" 8M || fail "write+verify on reload3"

touch /tmp/reload.stop
wait "$pf" || fail "write+verify passes on reload1 across the reloads"
log "reload: reload1 64/128 kept, reload2 32/64, bad file refused, reload3 32/64"
