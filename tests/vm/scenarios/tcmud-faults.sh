# SPDX-License-Identifier: GPL-2.0-or-later
# Backing-store faults under write I/O (issue 14, deliverable 4 in part):
# a dm table swapped to "error" under a LUN mid-write, a backing file whose
# tmpfs fills mid-write, and a backing file system remounted read-only by an
# ext4 error. Each ends with the right sense to the initiator (no write is
# acknowledged that did not happen), every acknowledged write reads back
# intact afterwards, and another LUN keeps serving fio write+verify all along.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
modprobe dm_mod
modprobe loop
start_tcmud
ack="python3 $TCMUD_SRC/tests/vm/guest/ack-io.py"
stop=/tmp/faults.stop
rm -f $stop /tmp/*.acked

finish() {
	local rc=$?
	touch $stop
	remove_all_targets 2>/dev/null || true
	umount /mnt/rofs 2>/dev/null || true
	umount /mnt/small 2>/dev/null || true
	dmsetup remove tcmud-faulty 2>/dev/null || true
	if [ -n "${loop:-}" ]; then losetup -d "$loop" 2>/dev/null || true; fi
	cleanup_scenario $rc
}
trap finish EXIT

# The LUN that must keep serving through every fault.
truncate -s 64M /tmp/steady.img
steady=$(export_via_loop "$(create_user_backstore steady0 file /tmp/steady.img $((64 << 20)))")
fio_verify_loop "$steady" 2M $stop &
io=$!

# 1. The table under a LUN swapped to "error" between writes, then back.
truncate -s 16M /tmp/dm.img
loop=$(losetup -f --show /tmp/dm.img)
sectors=$((16 << 11))
echo "0 $sectors linear $loop 0" | dmsetup create tcmud-faulty
# devtmpfs makes /dev/dm-N; /dev/mapper/ names need udev or mknodes.
dmdev=/dev/dm-$(dmsetup info -c --noheadings -o minor tcmud-faulty | tr -d ' ')
[ -b "$dmdev" ] || fail "no $dmdev"
dm=$(export_via_loop "$(create_user_backstore dm0 file "$dmdev;block;direct=1" $((16 << 20)))")
out=$($ack write "$dm" 0 32 /tmp/dm.acked)
expect_match "$out" "^acked 32 failed 0" "writes before the fault"
echo "0 $sectors error" | dmsetup load tcmud-faulty
dmsetup suspend tcmud-faulty && dmsetup resume tcmud-faulty
out=$($ack write "$dm" 32 16 /tmp/dm.acked)
expect_match "$out" "^acked 0 failed 16 errnos EIO" "writes to the failing table"
head -c 512 /dev/urandom > /tmp/blk
set +e
sense=$(sg_raw -s 512 -i /tmp/blk "$(sg_of "$dm")" 2a 00 00 00 10 00 00 00 01 00 2>&1)
set -e
expect_match "$sense" "Medium Error" "sense key of a write to the failing table"
expect_match "$sense" "Write error" "ASC of a write to the failing table"
echo "0 $sectors linear $loop 0" | dmsetup load tcmud-faulty
dmsetup suspend tcmud-faulty && dmsetup resume tcmud-faulty
out=$($ack verify "$dm" /tmp/dm.acked)
log "dm-error: $out"

# 2. ENOSPC mid-write: a 64 MiB sparse file on a 512 KiB tmpfs.
mkdir -p /mnt/small
mount -t tmpfs -o size=512K tmpfs /mnt/small
truncate -s 64M /mnt/small/thin.img
thin=$(export_via_loop "$(create_user_backstore thin0 file /mnt/small/thin.img $((64 << 20)))")
out=$($ack write "$thin" 0 256 /tmp/thin.acked)
log "ENOSPC: $out"
expect_match "$out" "^acked [1-9][0-9]* failed [1-9][0-9]* errnos ENOSPC$" "writes filling the tmpfs"
set +e
sense=$(sg_raw -s 512 -i /tmp/blk "$(sg_of "$thin")" 2a 00 00 00 40 00 00 00 01 00 2>&1)
set -e
expect_match "$sense" "Data Protect" "sense key with no space"
out=$($ack verify "$thin" /tmp/thin.acked)
log "ENOSPC: $out"

# 3. The backing file system stops taking writes after an ext4 error
#    (errors=remount-ro; 6.12 shuts the file system down rather than
#    flipping it to read-only, so the file returns EIO, reads included).
#    The acknowledged writes are checked in the file once it is mounted
#    again, after the LUNs are gone.
truncate -s 16M /tmp/fs.img
mkfs.ext4 -q -F /tmp/fs.img
mkdir -p /mnt/rofs
mount -o loop,errors=remount-ro /tmp/fs.img /mnt/rofs
truncate -s 8M /mnt/rofs/lun.img
ro=$(export_via_loop "$(create_user_backstore ro0 file /mnt/rofs/lun.img $((8 << 20)))")
out=$($ack write "$ro" 0 32 /tmp/ro.acked)
expect_match "$out" "^acked 32 failed 0" "writes before the file system error"
fsdev=$(basename "$(findmnt -no SOURCE /mnt/rofs)")
echo 1 > "/sys/fs/ext4/$fsdev/trigger_fs_error"
out=$($ack write "$ro" 32 8 /tmp/ro.acked)
log "file system error: $out"
expect_match "$out" "^acked 0 failed 8 errnos EIO" "writes after the file system error"
set +e
sense=$(sg_raw -s 512 -i /tmp/blk "$(sg_of "$ro")" 2a 00 00 00 10 00 00 00 01 00 2>&1)
set -e
expect_match "$sense" "Medium Error" "sense of a write the file system refuses"
expect_match "$sense" "Write error" "ASC of a write the file system refuses"

touch $stop
wait $io || fail "fio write+verify on the steady LUN failed during the faults"
kill -0 "$TCMUD_PID" || fail "tcmud died"
remove_all_targets
umount /mnt/rofs
mount -o loop /tmp/fs.img /mnt/rofs
out=$($ack verify /mnt/rofs/lun.img /tmp/ro.acked)
log "file system error: $out"
