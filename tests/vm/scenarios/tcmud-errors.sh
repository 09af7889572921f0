# SPDX-License-Identifier: GPL-2.0-or-later
# Backing-store errors become the sense an initiator expects, and tcmud goes
# on serving: EIO from a device-mapper "error" range -> MEDIUM ERROR
# (unrecovered read error / write error) with the LBA; ENOSPC from a full
# tmpfs under a sparse file -> DATA PROTECT / SPACE ALLOCATION FAILED.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
modprobe dm_mod
start_tcmud

# 8 MiB: the first 4 MiB read zeroes and swallow writes, the rest fails.
printf '0 8192 zero\n8192 8192 error\n' | dmsetup create tcmud-bad
trap 'rc=$?; dmsetup remove tcmud-bad 2>/dev/null || true; cleanup_scenario $rc' EXIT
# devtmpfs makes /dev/dm-N; /dev/mapper/ names need udev, which the guest lacks.
dmdev=/dev/dm-$(dmsetup info -c --noheadings -o minor tcmud-bad | tr -d ' ')
[ -b "$dmdev" ] || fail "no $dmdev for tcmud-bad"
bad=$(export_via_loop "$(create_user_backstore bad0 file "$dmdev;block" $((8 << 20)))")
sg=$(sg_of "$bad")
set +e
out=$(sg_raw -r 512 "$sg" 28 00 00 00 30 00 00 00 01 00 2>&1)   # READ(10) LBA 12288
set -e
expect_match "$out" "Medium Error" "sense key of a failed read"
expect_match "$out" "Unrecovered read error" "ASC of a failed read"
head -c 512 /dev/urandom > /tmp/blk
set +e
out=$(sg_raw -s 512 -i /tmp/blk "$sg" 2a 08 00 00 30 00 00 00 01 00 2>&1)  # WRITE(10) FUA
set -e
expect_match "$out" "Medium Error" "sense key of a failed write"
expect_match "$out" "Write error" "ASC of a failed write"
dd if="$bad" of=/dev/null bs=4k count=16 iflag=direct status=none || fail "good range unreadable after errors"

# A 64 MiB sparse file on a 4 MiB tmpfs: the fifth MiB written finds no space.
mkdir -p /mnt/small
mount -t tmpfs -o size=4M tmpfs /mnt/small
truncate -s 64M /mnt/small/thin.img
full=$(export_via_loop "$(create_user_backstore full0 file /mnt/small/thin.img $((64 << 20)))")
set +e
dd if=/dev/urandom of="$full" bs=1M count=8 oflag=direct status=none 2>/tmp/dd.err
rc=$?
set -e
[ $rc -ne 0 ] || fail "8 MiB fitted in a 4 MiB tmpfs"
expect_match "$(cat /tmp/dd.err)" "No space left on device" "error dd sees"
set +e
out=$(sg_raw -s 512 -i /tmp/blk "$(sg_of "$full")" 2a 00 00 00 40 00 00 00 01 00 2>&1)
set -e
expect_match "$out" "Data Protect" "sense key of a write with no space"
expect_match "$out" "[Ss]pace allocation failed write protect" "ASC of a write with no space"
sg_inq "$full" >/dev/null || fail "tcmud stopped serving after ENOSPC"
kill -0 "$TCMUD_PID" || fail "tcmud died"
