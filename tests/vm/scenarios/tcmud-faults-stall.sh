# SPDX-License-Identifier: GPL-2.0-or-later
# Backing-device faults under I/O, part 2 (issue 14, deliverable 4): an
# intermittently failing device (dm-flakey), a device so slow that the
# kernel's cmd_time_out fires first (dm-delay), and a backing file
# truncated under the LUN. Each ends with sense to the initiator (never a
# silent success), every acknowledged write reads back intact, tcmud keeps
# serving another LUN all along and serves the faulty one again once its
# device recovers, without a restart.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
modprobe dm_mod
modprobe dm_flakey
modprobe dm_delay
modprobe loop
start_tcmud
ack="python3 $TCMUD_SRC/tests/vm/guest/ack-io.py"
stop=/tmp/stall.stop
rm -f $stop /tmp/*.acked

finish() {
	local rc=$? l
	set +e
	touch $stop
	remove_all_targets 2>/dev/null || true
	dmsetup remove tcmud-flakey 2>/dev/null || true
	dmsetup remove tcmud-slow 2>/dev/null || true
	for l in $(losetup -j /tmp/flakey.img -O NAME -n) $(losetup -j /tmp/slow.img -O NAME -n); do
		losetup -d "$l" 2>/dev/null || true
	done
	cleanup_scenario $rc
}
trap finish EXIT

# dm_device NAME FILE SIZE_MB -> /dev/dm-N of a linear table over a loop
# device on FILE (devtmpfs makes dm-N; /dev/mapper names need udev).
dm_device() {
	local loop minor
	truncate -s "$3M" "$2"
	loop=$(losetup -f --show "$2")
	echo "0 $(($3 << 11)) linear $loop 0" | dmsetup create "$1"
	minor=$(dmsetup info -c --noheadings -o minor "$1" | tr -d ' ')
	[ -b "/dev/dm-$minor" ] || fail "no /dev/dm-$minor for $1"
	echo "/dev/dm-$minor"
}
# dm_swap NAME TABLE: replaces NAME's table (suspend flushes what dm-delay holds).
dm_swap() {
	echo "$2" | dmsetup load "$1"
	dmsetup suspend "$1"
	dmsetup resume "$1"
}
# sg_rw DEV OPCODE_HEX BLOCK: one READ(10)/WRITE(10) of 4 KiB block BLOCK
# (as ack-io.py counts) by SG_IO with a 90 s timeout; prints sg_raw's output
# (status and decoded sense) and never fails.
# shellcheck disable=SC2086 # $cdb is ten CDB bytes, one word each
sg_rw() {
	local cdb lba=$(($3 * 8))
	cdb="$2 00 $(printf '%02x %02x %02x %02x' $((lba >> 24 & 255)) $((lba >> 16 & 255)) \
		$((lba >> 8 & 255)) $((lba & 255))) 00 00 08 00"
	if [ "$2" = 28 ]; then
		sg_raw -t 90 -r 4096 -o /dev/null "$(sg_of "$1")" $cdb 2>&1 || true
	else
		head -c 4096 /dev/urandom > /tmp/stall.blk
		sg_raw -t 90 -s 4096 -i /tmp/stall.blk "$(sg_of "$1")" $cdb 2>&1 || true
	fi
}

truncate -s 64M /tmp/steady.img
steady=$(export_via_loop "$(create_user_backstore steady0 file /tmp/steady.img $((64 << 20)))")
fio_verify_loop "$steady" 2M $stop &
io=$!

# 1. dm-flakey: up 1 s, down 1 s with error_writes (writes fail while down,
#    reads pass), under a stream of acknowledged writes; then always down
#    with no feature (reads fail too).
dev=$(dm_device tcmud-flakey /tmp/flakey.img 16)
lin=$(dmsetup table tcmud-flakey)
loopdev=$(echo "$lin" | cut -d' ' -f4)
fl=$(export_via_loop "$(create_user_backstore flakey0 file "$dev;block;direct=1" $((16 << 20)))")
dm_swap tcmud-flakey "0 $((16 << 11)) flakey $loopdev 0 1 1 1 error_writes"
acked=0 failed=0 first=0
for _ in $(seq 12); do
	out=$($ack write "$fl" $first 64 /tmp/flakey.acked)
	first=$((first + 64))
	expect_match "$out" "errnos (EIO|-)$" "errnos of writes to a flapping device"
	acked=$((acked + $(echo "$out" | cut -d' ' -f2)))
	failed=$((failed + $(echo "$out" | cut -d' ' -f4)))
	[ $acked -gt 0 ] && [ $failed -gt 0 ] && break
done
log "dm-flakey error_writes: $acked writes acknowledged, $failed failed with EIO"
if ! { [ "$acked" -gt 0 ] && [ "$failed" -gt 0 ]; }; then
	fail "the flapping device never both took and refused a write"
fi
dm_swap tcmud-flakey "0 $((16 << 11)) flakey $loopdev 0 0 1"
sense=$(sg_rw "$fl" 28 1)
expect_match "$sense" "Medium Error" "sense key of a read from a failing device"
expect_match "$sense" "Unrecovered read error" "ASC of a read from a failing device"
sense=$(sg_rw "$fl" 2a 4000)
expect_match "$sense" "Medium Error" "sense key of a write to a failing device"
dm_swap tcmud-flakey "$lin"
out=$($ack verify "$fl" /tmp/flakey.acked) || fail "acknowledged writes lost: $out"
log "dm-flakey: $out"
out=$($ack write "$fl" 2048 16 /tmp/flakey.acked)
expect_match "$out" "^acked 16 failed 0" "writes once the device is healthy again"

# 2. dm-delay beyond cmd_time_out: the kernel times the command out and
#    answers the initiator itself; tcmud's late completion must be taken
#    quietly, and the LUN serves again once the delay is gone.
dev=$(dm_device tcmud-slow /tmp/slow.img 16)
lin=$(dmsetup table tcmud-slow)
loopdev=$(echo "$lin" | cut -d' ' -f4)
USER_BACKSTORE_ATTRS="cmd_time_out=5"
slowbs=$(create_user_backstore slow0 file "$dev;block;direct=1" $((16 << 20)))
unset USER_BACKSTORE_ATTRS
slow=$(export_via_loop "$slowbs")
out=$($ack write "$slow" 0 16 /tmp/slow.acked)
expect_match "$out" "^acked 16 failed 0" "writes before the stall"
dm_swap tcmud-slow "0 $((16 << 11)) delay $loopdev 0 30000"
t0=$(date +%s)
# A block no acknowledged write touched: a timed-out write may still land.
sense=$(sg_rw "$slow" 2a 64)
took=$(($(date +%s) - t0))
log "dm-delay 30 s, cmd_time_out 5 s: answered in ${took} s: $(echo "$sense" | tr '\n' ' ' | cut -c1-200)"
[ "$took" -lt 30 ] || fail "the stalled write was not timed out by the kernel (${took} s)"
expect_match "$sense" "(Not Ready|Hardware Error|Aborted Command|Medium Error|status: 0x2|CHECK CONDITION|[Cc]heck [Cc]ondition)" \
	"answer to a write that timed out"
[[ $sense =~ [Gg]ood ]] && fail "a timed-out write was reported GOOD"
dm_swap tcmud-slow "$lin"
kill -0 "$TCMUD_PID" || fail "tcmud died after a command timed out"
for _ in $(seq "$(scaled 60)"); do
	out=$($ack write "$slow" 128 8 /tmp/slow.acked)
	[[ $out =~ ^acked\ 8 ]] && break
	sleep 1
done
expect_match "$out" "^acked 8 failed 0" "writes after the stall ended"
out=$($ack verify "$slow" /tmp/slow.acked) || fail "acknowledged writes lost: $out"
log "dm-delay: $out"

# 3. The backing file truncated under the LUN: reads past the new end are
#    MEDIUM ERROR (never zeroes passed off as data, never a hang), writes
#    extend the file again and read back.
truncate -s 16M /tmp/trunc.img
tr=$(export_via_loop "$(create_user_backstore trunc0 file "/tmp/trunc.img" $((16 << 20)))")
out=$($ack write "$tr" 0 64 /tmp/trunc.acked)
expect_match "$out" "^acked 64 failed 0" "writes before the truncation"
fio --name=reads --filename="$tr" --direct=1 --rw=randread --bs=4k --iodepth=8 \
	--ioengine=libaio --runtime=6 --time_based --output-format=terse > /tmp/trunc.fio 2>&1 &
reader=$!
sleep 1
truncate -s 1M /tmp/trunc.img
wait $reader && fail "reads across the truncated range all succeeded"
sense=$(sg_rw "$tr" 28 2048)
expect_match "$sense" "Medium Error" "sense key of a read past the truncated end"
out=$($ack write "$tr" 1024 16 /tmp/trunc.acked2)
expect_match "$out" "^acked 16 failed 0" "writes past the truncated end"
out=$($ack verify "$tr" /tmp/trunc.acked2) || fail "acknowledged writes lost: $out"
log "truncation: $out"
grep -q "the backing file ends early" "$TCMUD_LOG" || fail "tcmud did not log the early end of file"

touch $stop
wait $io || fail "fio write+verify on the steady LUN failed during the faults"
kill -0 "$TCMUD_PID" || fail "tcmud died"
log "faults: flakey, delay past cmd_time_out and truncation answered; steady LUN verified"
