# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud stopped with SIGTERM (systemctl stop) under write+verify I/O:
# 1. it exits 0 within seconds, after finishing every command it had taken
#    from the ring (its log counts them per queue: "drained: N commands in
#    flight finished, none left unanswered"); the kernel device stays
#    enabled.
# 2. Commands that arrive while no daemon runs wait in the ring (the disk
#    shows requests in flight, fio blocks but does not fail); the next tcmud
#    takes the device over (reset_ring answers them BUSY, the initiator
#    retries) and fio goes on with no error; every pass verifies.
# A daemon that stays away longer than the device's cmd_time_out (30 s by
# default, 60 s here) would see those commands fail instead: docs/daemon.md.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 128M /tmp/term.img
bs=$(create_user_backstore term0 file /tmp/term.img $((128 << 20)))
echo 60 > "$bs/attrib/cmd_time_out"
dev=$(export_via_loop "$bs")

log "1: SIGTERM under write+verify"
fio_verify_loop "$dev" 24M /tmp/term.stop & io=$!
sleep 2
kill -0 $io 2>/dev/null || fail "fio ended before the SIGTERM"
start_ns=$(date +%s%N)
kill -TERM "$TCMUD_PID"
rc=0
wait "$TCMUD_PID" || rc=$?
ms=$((($(date +%s%N) - start_ns) / 1000000))
expect_eq "$rc" 0 "tcmud's exit status after SIGTERM"
[ "$ms" -lt 10000 ] || fail "tcmud took $ms ms to stop"
drained=$(grep "term0: queue 0: drain" "$TCMUD_LOG") || fail "tcmud logged no drain"
expect_match "$drained" "drained: [0-9]+ commands in flight finished, none left unanswered" \
	"the drain"
grep -q "term0: released" "$TCMUD_LOG" || fail "tcmud did not hand term0 back"
grep -q "^tcmud info: stopped" "$TCMUD_LOG" || fail "tcmud did not log its stop"
log "SIGTERM: exit 0 after $ms ms; ${drained#*term0: }"
expect_eq "$(cat "$bs/enable")" 1 "term0 enabled after tcmud stopped"

log "2: I/O while no daemon runs"
sleep 3
kill -0 $io 2>/dev/null || fail "fio ended while no daemon ran"
read -r reads writes < "/sys/block/${dev#/dev/}/inflight"
waiting=$((reads + writes))
[ "$waiting" -gt 0 ] || fail "no request waits on ${dev#/dev/} while no daemon runs"
log "$waiting requests wait on ${dev#/dev/} with no daemon"
before=$(grep -c "term0: taken over" "$TCMUD_LOG" || true)
start_tcmud
after=$(grep -c "term0: taken over" "$TCMUD_LOG" || true)
expect_eq "$after" $((before + 1)) "take-overs of term0 by the new tcmud"
sleep 3
touch /tmp/term.stop
wait $io || fail "fio saw an error across the SIGTERM and the restart"
log "write+verify passed across a SIGTERM, 5 s without a daemon and a restart"
