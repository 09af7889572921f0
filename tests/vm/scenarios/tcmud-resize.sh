# SPDX-License-Identifier: GPL-2.0-or-later
# Online resize through configfs attrib/dev_size (RECONFIG_DEVICE): growing
# an extend=1 file while fio writes and verifies the old range, the initiator
# seeing the new capacity after a rescan, the new range holding data, a
# shrink that keeps the file, and the refusals (size not a multiple of the
# block size; a file too small without extend=1) leaving the old size.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
M=$((1 << 20))
truncate -s 64M /tmp/grow.img
bs=$(create_user_backstore grow file "/tmp/grow.img;extend=1" $((64 * M)))
dev=$(export_via_loop "$bs")
expect_match "$(sg_readcap -l "$dev")" "Last LBA=131071 " "capacity before"

# A marker in the last MiB of the old size, checked after every change.
head -c $M /dev/urandom > /tmp/marker
dd if=/tmp/marker of="$dev" bs=$M seek=63 oflag=direct status=none
marker_intact() {
	cmp <(dd if="$dev" bs=$M skip=63 count=1 iflag=direct status=none) /tmp/marker \
		|| fail "the last MiB of the old size changed ($1)"
}

# Grow under I/O: write+verify of the first 32 MiB runs across the resize.
fio_write_verify "$dev" 32M &
io=$!
sleep 1
echo $((128 * M)) > "$bs/attrib/dev_size" || fail "growing to 128 MiB was refused"
wait $io || fail "fio across the resize"
expect_eq "$(cat "$bs/attrib/dev_size")" $((128 * M)) "dev_size after growing"
expect_eq "$(stat -c %s /tmp/grow.img)" $((128 * M)) "file size after growing"
wait_listed grow size $((128 * M))
echo 1 > "/sys/block/${dev#/dev/}/device/rescan"
expect_match "$(sg_readcap -l "$dev")" "Last LBA=262143 " "capacity after growing"
expect_eq "$(blockdev --getsize64 "$dev")" $((128 * M)) "block device size after rescan"
marker_intact "grow"
# The new range holds data.
fio_checked "write+verify of the grown range" 64M --name=new-range --filename="$dev" \
	--offset=64M --size=64M --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
	--bs=64k --verify=crc32c --do_verify=1 --verify_fatal=1
log "write+verify of the grown 64 MiB passed"

# Refused: not a multiple of the block size. The kernel keeps the old size.
if echo $((128 * M + 100)) > "$bs/attrib/dev_size" 2>/dev/null; then
	fail "a size that is not a multiple of the block size was accepted"
fi
expect_eq "$(cat "$bs/attrib/dev_size")" $((128 * M)) "dev_size after a refused resize"
expect_eq "$(listed grow size)" $((128 * M)) "tcmudctl's size after a refused resize"
grep -q "not a positive multiple" "$TCMUD_LOG" || fail "no reason logged for the refusal"

# Shrink: the capacity drops, the file keeps every byte.
echo $((64 * M)) > "$bs/attrib/dev_size" || fail "shrinking to 64 MiB was refused"
echo 1 > "/sys/block/${dev#/dev/}/device/rescan"
expect_match "$(sg_readcap -l "$dev")" "Last LBA=131071 " "capacity after shrinking"
wait_listed grow size $((64 * M))
expect_eq "$(stat -c %s /tmp/grow.img)" $((128 * M)) "file size after shrinking"
marker_intact "shrink"
out=$(sg_raw -v "$(sg_of "$dev")" 28 00 00 02 00 00 00 00 01 00 2>&1 || true)
expect_match "$out" "LBA out of range" "READ(10) past the shrunk end"

# A file without extend=1 cannot grow.
truncate -s 32M /tmp/fixed.img
bs2=$(create_user_backstore fixed file /tmp/fixed.img $((32 * M)))
if echo $((64 * M)) > "$bs2/attrib/dev_size" 2>/dev/null; then
	fail "growing past a file without extend=1 was accepted"
fi
expect_eq "$(cat "$bs2/attrib/dev_size")" $((32 * M)) "dev_size of the fixed file"
expect_eq "$(stat -c %s /tmp/fixed.img)" $((32 * M)) "the fixed file was not grown"
expect_eq "$(listed fixed size)" $((32 * M)) "tcmudctl's size of the fixed file"
grep -q "fixed: resize to 67108864 bytes refused: .*extend=1" "$TCMUD_LOG" \
	|| fail "no reason logged for the fixed file"
log "resize: grow under I/O, rescan, shrink and both refusals behave"
