# SPDX-License-Identifier: GPL-2.0-or-later
# WRITE ATOMIC(16) and EXTENDED COPY on the stock kernel.
# - What statx STATX_WRITE_ATOMIC says for a file on ext4 and for a block
#   device with atomic writes (scsi_debug atomic_wr=1), and which path tcmud
#   takes for each (its log); VPD 0xb0's atomic fields as sg_vpd reads them.
# - WRITE ATOMIC through sg_write_x --atomic=0 and through the guest's own
#   sd driver (pwritev2 RWF_ATOMIC on /dev/sdX becomes WRITE ATOMIC(16)),
#   data read back; bad fields refused with the right sense.
# - sg_xcopy within one tcmud LUN and between two, data compared with cmp;
#   a copy naming a LUN this daemon does not serve is COPY ABORTED, and so
#   is one between two tcmud LUNs until tcmud.conf's copy_groups joins them
#   (applied by a reload).
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
conf=/tmp/tcmud-xcopy.conf
echo "copy_groups = none" >"$conf"
start_tcmud -c "$conf"
aio="python3 $TCMUD_SRC/tests/vm/guest/atomic_io.py"

# --- statx on the two kinds of backing ---
modprobe loop
truncate -s 64M /tmp/ext4.img
mkfs.ext4 -q -F /tmp/ext4.img
mkdir -p /mnt/ext4
mount -o loop /tmp/ext4.img /mnt/ext4
truncate -s 16M /mnt/ext4/a.img
log "statx STATX_WRITE_ATOMIC, file on ext4: $($aio statx /mnt/ext4/a.img)"
loopdev=$(findmnt -n -o SOURCE /mnt/ext4)
log "statx STATX_WRITE_ATOMIC, loop device $loopdev: $($aio statx "$loopdev")"
modprobe scsi_debug atomic_wr=1 dev_size_mb=16 sector_size=512 \
	|| modprobe scsi_debug dev_size_mb=16 sector_size=512
sdbg=""
for _ in $(seq "$(scaled 100)"); do
	for d in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
		[ -e "$d" ] && sdbg=/dev/$(basename "$d")
	done
	[ -n "$sdbg" ] && [ -b "$sdbg" ] && break
	sleep 0.1
done
[ -b "$sdbg" ] || fail "no scsi_debug disk"
sdbg_statx=$($aio statx "$sdbg")
log "statx STATX_WRITE_ATOMIC, scsi_debug $sdbg: $sdbg_statx"

# --- LUN a: ext4 file, range lock; LUN b: scsi_debug, O_DIRECT ---
a=$(export_via_loop "$(create_user_backstore xa file /mnt/ext4/a.img $((16 << 20)) a0a0-0001)")
b=$(export_via_loop "$(create_user_backstore xb file "$sdbg;block;direct" $((16 << 20)) b0b0-0002)")
sga=$(sg_of "$a") sgb=$(sg_of "$b")
log "tcmud disks $a ($sga, ext4 file) and $b ($sgb, $sdbg O_DIRECT)"
{ grep "statx atomic write" "$TCMUD_LOG" || true; } | while read -r line; do log "tcmud: ${line#*] }"; done
for dev in "$a" "$b"; do
	vpd=$(sg_vpd --page=bl "$dev")
	log "$dev block limits:"$'\n'"$(grep -i atomic <<<"$vpd")"
	expect_match "$vpd" "[Mm]aximum atomic transfer length: [1-9]" "$dev max atomic"
	log "$dev sd atomic_write_unit_max_bytes: $(cat /sys/block/"$(basename "$dev")"/queue/atomic_write_unit_max_bytes)"
done
# Which path each takes shows in VPD 0xb0: the range lock advertises no
# alignment; RWF_ATOMIC advertises the backing's unit_min (1024 bytes here).
expect_match "$(sg_vpd --page=bl "$a")" "Atomic alignment: 0" "$a (ext4 file): range lock"
if [ "$sdbg_statx" != none ]; then
	expect_match "$(sg_vpd --page=bl "$b")" "Atomic alignment: $(( ${sdbg_statx%% *} / 512 ))" \
		"$b (scsi_debug, O_DIRECT): RWF_ATOMIC units"
fi

# --- WRITE ATOMIC ---
log "WRITE ATOMIC"
for dev in "$a" "$b"; do
	sg=$(sg_of "$dev")
	dd if=/dev/urandom of=/tmp/wa bs=4096 count=1 status=none
	sg_write_x --atomic=0 --in=/tmp/wa --lba=64 --num=8 "$sg" || fail "WRITE ATOMIC on $dev"
	dd if="$dev" bs=512 skip=64 count=8 iflag=direct status=none | cmp - /tmp/wa \
		|| fail "WRITE ATOMIC on $dev did not write"
	set +e
	# ATOMIC BOUNDARY 1 (sg_write_x --atomic=1 does not print the sense).
	out=$(sg_raw -s 4096 -i /tmp/wa "$sg" 9c 00 00 00 00 00 00 00 00 40 00 01 00 08 00 00 2>&1)
	set -e
	expect_match "$out" "[Ii]nvalid field in cdb" "ATOMIC BOUNDARY 1 on $dev"
	# The guest's own sd sends WRITE ATOMIC(16) for an RWF_ATOMIC write.
	expect_eq "$($aio pwrite "$dev" 16384 4096)" ok "pwritev2 RWF_ATOMIC on $dev"
done

# --- EXTENDED COPY ---
log "EXTENDED COPY"
dd if=/dev/urandom of=/tmp/src bs=512 count=1024 status=none
dd if=/tmp/src of="$a" bs=512 seek=4096 oflag=direct status=none
# Within a: 1024 blocks from LBA 4096 to 8192, XCOPY sent to a.
sg_xcopy if="$sga" of="$sga" skip=4096 seek=8192 count=1024 bs=512 bpt=1024 \
	|| fail "sg_xcopy within $a"
dd if="$a" bs=512 skip=8192 count=1024 iflag=direct status=none | cmp - /tmp/src \
	|| fail "sg_xcopy within $a: data"
# Between a and b before any copy group joins them: refused both ways,
# and b's blocks are neither read into a nor overwritten.
dd if=/dev/urandom of=/tmp/b-before bs=512 count=1024 status=none
dd if=/tmp/b-before of="$b" bs=512 seek=100 oflag=direct status=none
for dir in "--on_src if=$sga of=$sgb" "--on_dst if=$sgb of=$sga"; do
	set +e
	# shellcheck disable=SC2086 # dir is the sg_xcopy options, split on purpose
	out=$(sg_xcopy $dir skip=4096 seek=100 count=1024 bs=512 bpt=1024 verbose=3 2>&1)
	rc=$?
	set -e
	[ "$rc" -ne 0 ] || fail "sg_xcopy ($dir) crossed devices no copy group joins"
	expect_match "$out" "[Cc]opy target device not reachable" "XCOPY ($dir) without copy_groups"
done
dd if="$b" bs=512 skip=100 count=1024 iflag=direct status=none | cmp - /tmp/b-before \
	|| fail "b changed by a refused XCOPY"
log "XCOPY between xa and xb refused without copy_groups"
# Join them and reload: the running devices follow at once.
echo 'copy_groups = "xcopy-test: xa xb"' >"$conf"
kill -HUP "$TCMUD_PID"
for _ in $(seq "$(scaled 100)"); do
	grep -q "copy_groups: xcopy-test: xa xb" "$TCMUD_LOG" && break
	sleep 0.1
done
grep -q "copy_groups: xcopy-test: xa xb" "$TCMUD_LOG" || fail "tcmud did not reload copy_groups"
# From a to b, XCOPY sent to the source, then back from b to a (sent to
# the destination); one 512 KiB XCOPY, then four of 128 KiB.
sg_xcopy --on_src if="$sga" of="$sgb" skip=4096 seek=100 count=1024 bs=512 bpt=1024 \
	|| fail "sg_xcopy $a -> $b"
dd if="$b" bs=512 skip=100 count=1024 iflag=direct status=none | cmp - /tmp/src \
	|| fail "sg_xcopy $a -> $b: data"
sg_xcopy --on_dst if="$sgb" of="$sga" skip=100 seek=20000 count=1024 bs=512 bpt=256 \
	|| fail "sg_xcopy $b -> $a"
dd if="$a" bs=512 skip=20000 count=1024 iflag=direct status=none | cmp - /tmp/src \
	|| fail "sg_xcopy $b -> $a: data"
# A fileio LUN is not ours: naming it is COPY TARGET DEVICE NOT REACHABLE.
truncate -s 16M /tmp/fio.img
f=$(export_via_loop "$(create_fileio_backstore xf /tmp/fio.img $((16 << 20)))")
# (sg_xcopy prints the sense in full only when verbose.)
set +e
out=$(sg_xcopy --on_src if="$sga" of="$(sg_of "$f")" count=8 bs=512 verbose=3 2>&1)
set -e
log "sg_xcopy to fileio: $(grep -i -m2 'not reachable\|copy aborted' <<<"$out")"
expect_match "$out" "[Cc]opy target device not reachable" "XCOPY to a LUN tcmud does not serve"
out=$(sg_copy_results --params "$sga")
log "RECEIVE COPY RESULTS OPERATING PARAMETERS:"$'\n'"$out"
expect_match "$out" "[Ss]egment descriptor count: 64" "operating parameters"
kill -0 "$TCMUD_PID" || fail "tcmud died"
log "WRITE ATOMIC and EXTENDED COPY passed"
