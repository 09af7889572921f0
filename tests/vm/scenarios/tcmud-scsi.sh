# tcmud answers sg3_utils the way a SCSI initiator expects, on the stock
# kernel: identity and limits (VPD 0x83, 0xb0), capacity with thin
# provisioning, UNMAP and WRITE SAME(16)+UNMAP reading back zeroes,
# COMPARE AND WRITE (match, then miscompare with the right sense),
# SYNCHRONIZE CACHE, and bad CDBs failed with the right sense while the
# daemon keeps serving.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 64M /tmp/scsi.img
bs=$(create_user_backstore scsi0 file /tmp/scsi.img $((64 << 20)) scsi0-serial-42)
dev=$(export_via_loop "$bs")
sg=$(sg_of "$dev")
log "tcmud disk is $dev ($sg)"

vpd83=$(sg_vpd -p 0x83 "$dev")
expect_match "$vpd83" "scsi0-serial-42" "VPD 0x83 carries the configfs serial"
expect_match "$vpd83" "NAA" "VPD 0x83 has an NAA designator"
vpd80=$(sg_vpd -p 0x80 "$dev")
expect_match "$vpd80" "scsi0-serial-42" "VPD 0x80 unit serial"
b0=$(sg_vpd -p 0xb0 "$dev")
expect_match "$b0" "Maximum unmap LBA count: [1-9]" "VPD 0xb0 unmap limit"
cap=$(sg_readcap -l "$dev")
expect_match "$cap" "Last LBA=131071 " "READ CAPACITY(16) last LBA"
expect_match "$cap" "Logical block provisioning: lbpme=1" "thin provisioning advertised"

# UNMAP and WRITE SAME(16) with UNMAP: the blocks read back as zeroes.
dd if=/dev/urandom of=/tmp/pattern bs=512 count=64 status=none
dd if=/tmp/pattern of="$dev" bs=512 count=64 oflag=direct status=none
sg_unmap --force --lba=0 --num=16 "$dev" || fail "sg_unmap"
zeroes=$(dd if="$dev" bs=512 count=16 iflag=direct status=none | tr -d '\0' | wc -c)
expect_eq "$zeroes" 0 "non-zero bytes after UNMAP"
dd if=/dev/zero of=/tmp/zero512 bs=512 count=1 status=none
sg_write_same --16 --unmap --lba=16 --num=16 --in=/tmp/zero512 "$dev" || fail "sg_write_same --16 --unmap"
zeroes=$(dd if="$dev" bs=512 skip=16 count=16 iflag=direct status=none | tr -d '\0' | wc -c)
expect_eq "$zeroes" 0 "non-zero bytes after WRITE SAME(16)+UNMAP"
kept=$(dd if="$dev" bs=512 skip=32 count=32 iflag=direct status=none | cmp - <(dd if=/tmp/pattern bs=512 skip=32 count=32 status=none) && echo same)
expect_eq "$kept" same "blocks outside the unmapped ranges"

# COMPARE AND WRITE at LBA 40: compare with what is there, write new data.
dd if=/tmp/pattern bs=512 skip=40 count=1 status=none > /tmp/caw
head -c 512 /dev/urandom > /tmp/caw-new
cat /tmp/caw-new >> /tmp/caw
sg_compare_and_write --in=/tmp/caw --lba=40 --num=1 "$dev" || fail "COMPARE AND WRITE that matches"
now=$(dd if="$dev" bs=512 skip=40 count=1 iflag=direct status=none | cmp - /tmp/caw-new && echo written)
expect_eq "$now" written "COMPARE AND WRITE wrote the new block"
set +e
out=$(sg_compare_and_write --in=/tmp/caw --lba=40 --num=1 "$dev" 2>&1)  # old data no longer matches
rc=$?
set -e
expect_eq "$rc" 14 "sg_compare_and_write exit status on miscompare"
expect_match "$out" "[Mm]iscompare" "miscompare sense"

sg_sync "$dev" || fail "SYNCHRONIZE CACHE(10)"
sg_sync --16 "$dev" || fail "SYNCHRONIZE CACHE(16)"

# An opcode nobody defines, and INQUIRY asking for a page without EVPD.
set +e
out=$(sg_raw -r 64 "$sg" c5 00 00 00 00 00 2>&1)
expect_match "$out" "Illegal Request" "sense key for an unknown opcode"
expect_match "$out" "[Ii]nvalid command operation code" "ASC for an unknown opcode"
out=$(sg_raw -r 64 "$sg" 12 00 80 00 40 00 2>&1)
expect_match "$out" "Invalid field in cdb" "INQUIRY page without EVPD"
out=$(sg_raw -v "$sg" 28 00 00 02 00 00 00 00 01 00 2>&1)  # READ(10) beyond the end
expect_match "$out" "Logical block address out of range" "READ past the last LBA"
set -e
inq=$(sg_inq "$dev")
expect_match "$inq" "Vendor identification: LIO-ORG" "still serving after bad CDBs"
kill -0 "$TCMUD_PID" || fail "tcmud died"
