# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud serves a file-backed TCMU disk on the stock kernel: the disk appears
# through tcm_loop, answers INQUIRY and READ CAPACITY, and 64 MiB of
# checksummed writes read back intact.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 256M /tmp/tcmud0.img
bs=$(create_user_backstore disk0 file /tmp/tcmud0.img $((256 << 20)))
dev=$(export_via_loop "$bs")
log "tcmud disk is $dev"
inq=$(sg_inq "$dev")
expect_match "$inq" "Vendor identification: LIO-ORG" "sg_inq vendor"
cap=$(sg_readcap -l "$dev")
expect_match "$cap" "Last LBA=524287 " "sg_readcap last LBA"
fio_write_verify "$dev" 64M

# The same through O_DIRECT (direct=1): a file on ext4 on a loop device, so
# the daemon's reads and writes are bios to and from the data area's pages
# (pinned per I/O by the block layer) instead of page-cache copies.
mount_loop_ext4 direct 96
truncate -s 64M /mnt/direct/lun.img
ddev=$(export_via_loop "$(create_user_backstore direct0 file "/mnt/direct/lun.img;direct=1" $((64 << 20)))")
# tcmud holds the file open with O_DIRECT (040000 on x86), not merely accepted
# the option.
flags=""
for fd in /proc/"$TCMUD_PID"/fd/*; do
	[ "$(readlink "$fd")" = /mnt/direct/lun.img ] || continue
	flags=$(awk '/^flags:/ {print $2}' "/proc/$TCMUD_PID/fdinfo/${fd##*/}")
done
[ -n "$flags" ] || fail "tcmud has no open fd on /mnt/direct/lun.img"
(( 8#$flags & 8#040000 )) || fail "tcmud opened /mnt/direct/lun.img without O_DIRECT (flags $flags)"
fio_write_verify "$ddev" 32M
# What the initiator wrote is in the file, read through its page cache.
cmp -n $((32 << 20)) "$ddev" /mnt/direct/lun.img || fail "direct=1: the LUN and the file differ"
remove_all_targets
# On 6.1 the file system stayed busy a moment after the device was gone
# (seen in tests/vm/stock-6.1.list; the file's last reference goes with
# tcmud's io_uring teardown, which the kernel finishes in a worker after
# close). Bounded: a file still held after 10 s is a leak.
t0=$(date +%s%N)
for _ in $(seq 50); do
	umount /mnt/direct 2> /dev/null && break
	sleep 0.2
done
if mountpoint -q /mnt/direct; then
	fail "/mnt/direct still busy 10 s after its LUN was removed: $(fuser -vm /mnt/direct 2>&1)"
fi
log "/mnt/direct unmounted $(( ($(date +%s%N) - t0) / 1000000 )) ms after the LUN's removal"
