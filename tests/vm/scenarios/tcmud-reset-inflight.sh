# SPDX-License-Identifier: GPL-2.0-or-later
# A ring reset with backing I/O in flight (issue 41 item 1). The LUN sits on
# a dm-delay device that holds every read and every write for a while, so
# READs are stuck in tcmud's io_uring when action/reset_ring fails them and
# frees their data blocks. New WRITEs (fio's, and the retries of those the
# reset failed) then get those blocks; a WRITE's data is read from its block
# only when dm-delay lets it go, after the stale READ has landed there. Were
# the WRITE served, it would put the READ's bytes on disk under the WRITE's
# LBA and answer GOOD; fio's crc32c verify of every acknowledged write
# catches that. tcmud must hold new commands until the stale READs end and
# have the kernel retry them (its own second reset), so every round
# verifies. Then kill -9 with the same I/O in flight and a new daemon at
# once: the killed daemon's io_uring I/O outlives its process (the kernel's
# ring exit work runs it to the end), and only the backing store's lock,
# which that I/O's reference to the open file keeps, tells the new daemon
# to wait (file/backing_lock.h). It must, before it resets the ring, or
# that I/O lands in new commands' blocks: every acknowledged write still
# verifies after the takeover. (Without the lock, 8 to 11 "bad magic
# header 0" in this round.)
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
modprobe dm_mod
modprobe dm_delay
modprobe loop
start_tcmud

finish() {
	local rc=$? l
	set +e
	remove_all_targets 2>/dev/null || true
	dmsetup remove tcmud-reset-slow 2>/dev/null || true
	for l in $(losetup -j /tmp/reset-slow.img -O NAME -n); do losetup -d "$l"; done
	cleanup_scenario $rc
}
trap finish EXIT

mb=32
truncate -s ${mb}M /tmp/reset-slow.img
loopdev=$(losetup -f --show /tmp/reset-slow.img)
# Reads and writes each held 1.5 s (delay DEV OFF MS [WDEV WOFF WMS]).
delay_ms=$(scaled 1500)
echo "0 $((mb << 11)) delay $loopdev 0 $delay_ms $loopdev 0 $delay_ms" |
	dmsetup create tcmud-reset-slow
minor=$(dmsetup info -c --noheadings -o minor tcmud-reset-slow | tr -d ' ')
dm=/dev/dm-$minor
[ -b "$dm" ] || fail "no $dm"
bs=$(create_user_backstore rsi0 file "$dm;block;direct=1" $((mb << 20)))
dev=$(export_via_loop "$bs")
log "LUN $dev on $dm (dm-delay ${delay_ms} ms)"

# stuck_reads SECONDS: reads of the second half, 16 at a time, for that long:
# always some in flight.
stuck_reads() {
	fio --name=stuck-reads --filename="$dev" --offset=$((mb / 2))M --size=$((mb / 2))M \
		--direct=1 --ioengine=libaio --iodepth=16 --rw=randread --bs=64k \
		--time_based --runtime="$1" --output=/dev/null
}

resets_before=$(queue_metric rsi0 0 tcmud_ring_resets_total)
for round in 1 2 3; do
	stuck_reads "$(scaled 8)" & reads=$!
	# Written and verified in the first half while the reset happens.
	fio_write_verify "$dev" 4M &
	writes=$!
	sleep "$(scaled 2)"
	echo 1 > "$bs/action/reset_ring"
	log "round $round: action/reset_ring with reads and writes in flight"
	wait "$writes" || fail "round $round: write+verify across a ring reset"
	wait "$reads" || true # a READ the reset failed may end in an error
done
resets=$(( $(queue_metric rsi0 0 tcmud_ring_resets_total) - resets_before ))
stale=$(queue_metric rsi0 0 tcmud_stale_results_total)
log "ring resets seen or made: $resets; stale results dropped: $stale"
grep -E "rsi0: queue 0: (the kernel reset|the I/O of the commands|ring reset by tcmud)" \
	"$TCMUD_LOG" | tail -6 | while read -r line; do log "tcmud: ${line#*] }"; done
# Each round's reset must have caught I/O in flight (else the test proved
# nothing), and tcmud's own reset followed it.
[ "$stale" -ge 1 ] || fail "no command was in flight at any reset"
grep -q "rsi0: queue 0: ring reset by tcmud" "$TCMUD_LOG" ||
	fail "tcmud never reset the ring after the stale I/O ended"

# kill -9 with reads and writes stuck in dm-delay; a new daemon at once.
# The I/O is held 5 s here, longer than the next daemon takes to start.
long_ms=$(scaled 5000)
echo "0 $((mb << 11)) delay $loopdev 0 $long_ms $loopdev 0 $long_ms" | dmsetup load tcmud-reset-slow
dmsetup suspend tcmud-reset-slow
dmsetup resume tcmud-reset-slow
stuck_reads "$(scaled 20)" & reads=$!
fio_write_verify "$dev" 2M &
writes=$!
sleep "$(scaled 3)"
old=$TCMUD_PID
kill -9 "$TCMUD_PID"
start_tcmud
log "tcmud $old killed with I/O in flight (dm-delay ${long_ms} ms), $TCMUD_PID started"
wait "$writes" || fail "write+verify across kill -9 and takeover"
wait "$reads" || true
grep -q "rsi0: taken over" "$TCMUD_LOG" || fail "rsi0 not taken over"
# The test proves the wait only if the killed daemon's I/O was still
# holding the backing store when the new one opened it.
grep -q "rsi0: $dm is locked by another open of it" "$TCMUD_LOG" ||
	fail "the new daemon did not find the killed one's I/O holding $dm"
grep "rsi0: $dm: the other holder let go after" "$TCMUD_LOG" | while read -r line; do
	log "tcmud: $line"
done
echo "0 $((mb << 11)) delay $loopdev 0 $delay_ms $loopdev 0 $delay_ms" | dmsetup load tcmud-reset-slow
dmsetup suspend tcmud-reset-slow
dmsetup resume tcmud-reset-slow
fio_write_verify "$dev" 4M
kill -0 "$TCMUD_PID" || fail "tcmud died"
log "ring resets and kill -9 with I/O in flight: every acknowledged write verified"
