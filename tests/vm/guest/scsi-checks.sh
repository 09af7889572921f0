# SPDX-License-Identifier: GPL-2.0-or-later
# sg3_utils checks of one tcmud disk, sourced after lib.sh by the scenarios
# that run them (tcmud-scsi on the stock kernel, tcmud-mq on every queue
# count of the patched modules):
#
#   sg3_checks DEV SERIAL LAST_LBA
#
# identity and limits (INQUIRY, VPD 0x80/0x83/0xb0), capacity with thin
# provisioning, UNMAP and WRITE SAME(16)+UNMAP reading back zeroes,
# COMPARE AND WRITE (match, then miscompare with the right sense),
# SYNCHRONIZE CACHE, and bad CDBs failed with the right sense while the
# daemon keeps serving. Uses LBAs 0-63 of DEV (512-byte blocks) and /tmp.
sg3_checks() {
	local dev=$1 serial=$2 last_lba=$3 sg out rc
	sg=$(sg_of "$dev")
	out=$(sg_inq "$dev")
	expect_match "$out" "Vendor identification: LIO-ORG" "INQUIRY vendor"
	out=$(sg_vpd -p 0x83 "$dev")
	expect_match "$out" "$serial" "VPD 0x83 carries the configfs serial"
	expect_match "$out" "NAA" "VPD 0x83 has an NAA designator"
	out=$(sg_vpd -p 0x80 "$dev")
	expect_match "$out" "$serial" "VPD 0x80 unit serial"
	out=$(sg_vpd -p 0xb0 "$dev")
	expect_match "$out" "Maximum unmap LBA count: [1-9]" "VPD 0xb0 unmap limit"
	out=$(sg_readcap -l "$dev")
	expect_match "$out" "Last LBA=$last_lba " "READ CAPACITY(16) last LBA"
	expect_match "$out" "Logical block provisioning: lbpme=1" "thin provisioning advertised"
	sg3_unmap_checks "$dev"
	sg3_caw_checks "$dev"
	sg_sync "$dev" || fail "SYNCHRONIZE CACHE(10)"
	sg_sync --16 "$dev" || fail "SYNCHRONIZE CACHE(16)"
	sg3_bad_cdb_checks "$sg"
	out=$(sg_inq "$dev")
	expect_match "$out" "Vendor identification: LIO-ORG" "still serving after bad CDBs"
	log "sg3_utils checks passed on $dev"
}

# UNMAP and WRITE SAME(16) with UNMAP: the blocks read back as zeroes, the
# blocks around them keep their data.
sg3_unmap_checks() {
	local dev=$1 zeroes kept
	dd if=/dev/urandom of=/tmp/pattern bs=512 count=64 status=none
	dd if=/tmp/pattern of="$dev" bs=512 count=64 oflag=direct status=none
	sg_unmap --force --lba=0 --num=16 "$dev" || fail "sg_unmap"
	zeroes=$(dd if="$dev" bs=512 count=16 iflag=direct status=none | tr -d '\0' | wc -c)
	expect_eq "$zeroes" 0 "non-zero bytes after UNMAP"
	dd if=/dev/zero of=/tmp/zero512 bs=512 count=1 status=none
	sg_write_same --16 --unmap --lba=16 --num=16 --in=/tmp/zero512 "$dev" \
		|| fail "sg_write_same --16 --unmap"
	zeroes=$(dd if="$dev" bs=512 skip=16 count=16 iflag=direct status=none | tr -d '\0' | wc -c)
	expect_eq "$zeroes" 0 "non-zero bytes after WRITE SAME(16)+UNMAP"
	kept=$(dd if="$dev" bs=512 skip=32 count=32 iflag=direct status=none |
		cmp - <(dd if=/tmp/pattern bs=512 skip=32 count=32 status=none) && echo same)
	expect_eq "$kept" same "blocks outside the unmapped ranges"
}

# COMPARE AND WRITE at LBA 40: compare with what is there, write new data;
# the same command again miscompares.
sg3_caw_checks() {
	local dev=$1 now out rc
	dd if=/tmp/pattern bs=512 skip=40 count=1 status=none > /tmp/caw
	head -c 512 /dev/urandom > /tmp/caw-new
	cat /tmp/caw-new >> /tmp/caw
	sg_compare_and_write --in=/tmp/caw --lba=40 --num=1 "$dev" \
		|| fail "COMPARE AND WRITE that matches"
	now=$(dd if="$dev" bs=512 skip=40 count=1 iflag=direct status=none |
		cmp - /tmp/caw-new && echo written)
	expect_eq "$now" written "COMPARE AND WRITE wrote the new block"
	set +e
	out=$(sg_compare_and_write --in=/tmp/caw --lba=40 --num=1 "$dev" 2>&1)
	rc=$?
	set -e
	expect_eq "$rc" 14 "sg_compare_and_write exit status on miscompare"
	expect_match "$out" "[Mm]iscompare" "miscompare sense"
}

# An opcode nobody defines, INQUIRY asking for a page without EVPD, and a
# READ(10) past the end, through the sg node SG.
sg3_bad_cdb_checks() {
	local sg=$1 out
	set +e
	out=$(sg_raw -r 64 "$sg" c5 00 00 00 00 00 2>&1)
	expect_match "$out" "Illegal Request" "sense key for an unknown opcode"
	expect_match "$out" "[Ii]nvalid command operation code" "ASC for an unknown opcode"
	out=$(sg_raw -r 64 "$sg" 12 00 80 00 40 00 2>&1)
	expect_match "$out" "Invalid field in cdb" "INQUIRY page without EVPD"
	out=$(sg_raw -v "$sg" 28 00 ff ff ff f0 00 00 01 00 2>&1)  # READ(10) beyond the end
	expect_match "$out" "Logical block address out of range" "READ past the last LBA"
	set -e
}

# The SBC-4 commands added for a complete disk, through sg3_utils (sg_raw
# where no tool sends them), on DEV after sg3_checks (LBAs 0-31 unmapped,
# 32-63 holding /tmp/pattern). Uses LBAs 64-79.
sg3_sbc4_checks() {
	local dev=$1 sg out
	sg=$(sg_of "$dev")
	dd if=/dev/urandom of=/tmp/sbc4 bs=512 count=2 status=none
	# VERIFY(12) BYTCHK 01b of blocks 32-33 against the pattern; WRITE AND
	# VERIFY(12) of two new blocks at 64.
	dd if=/tmp/pattern of=/tmp/sbc4-32 bs=512 skip=32 count=2 status=none
	sg_raw -s 1024 -i /tmp/sbc4-32 "$sg" af 02 00 00 00 20 00 00 00 02 00 00 \
		>/dev/null 2>&1 || fail "VERIFY(12) BYTCHK 01b"
	sg_raw -s 1024 -i /tmp/sbc4 "$sg" ae 02 00 00 00 40 00 00 00 02 00 00 \
		>/dev/null 2>&1 || fail "WRITE AND VERIFY(12)"
	dd if="$dev" bs=512 skip=64 count=2 iflag=direct status=none | cmp - /tmp/sbc4 \
		|| fail "WRITE AND VERIFY(12) did not write"
	set +e
	out=$(sg_raw -s 512 -i /tmp/sbc4 "$sg" af 02 00 00 00 20 00 00 00 01 00 00 2>&1)
	set -e
	expect_match "$out" "[Mm]iscompare" "VERIFY(12) of other data"
	# PRE-FETCH(16) and (10): CONDITION MET on a buffered file (sg_seek
	# says so and exits 25, SG_LIB_CAT_CONDITION_MET).
	set +e
	out=$(sg_seek --pre-fetch --lba=64 --num-blocks=16 "$dev" 2>&1)
	expect_eq "$?" 25 "sg_seek exit status for PRE-FETCH(16)"
	expect_match "$out" "[Cc]ondition met" "PRE-FETCH(16)"
	out=$(sg_seek --pre-fetch --10 --immed --lba=0 --num-blocks=0 "$dev" 2>&1)
	expect_match "$out" "[Cc]ondition met" "PRE-FETCH(10) to the end, IMMED"
	set -e
	# GET LBA STATUS: the unmapped start, then the pattern's blocks.
	out=$(sg_get_lba_status --maxlen=1024 --lba=0 "$dev")
	expect_match "$out" "deallocated" "GET LBA STATUS after UNMAP"
	expect_match "$out" "[^e]mapped" "GET LBA STATUS of written blocks"
	# ORWRITE(16): 0x0f OR 0xf0 is 0xff.
	head -c 512 /dev/zero | tr '\0' '\017' > /tmp/or-medium
	head -c 512 /dev/zero | tr '\0' '\360' > /tmp/or-data
	dd if=/tmp/or-medium of="$dev" bs=512 seek=70 oflag=direct status=none
	sg_write_x --or --in=/tmp/or-data --lba=70 --num=1 "$dev" || fail "ORWRITE(16)"
	out=$(dd if="$dev" bs=512 skip=70 count=1 iflag=direct status=none | tr -d '\377' | wc -c)
	expect_eq "$out" 0 "bytes other than 0xff after ORWRITE"
	# PREVENT ALLOW MEDIUM REMOVAL, READ DEFECT DATA(10), FORMAT UNIT,
	# SEND DIAGNOSTIC's default self-test.
	sg_prevent --prevent=1 "$dev" || fail "PREVENT MEDIUM REMOVAL"
	sg_prevent --allow "$dev" || fail "ALLOW MEDIUM REMOVAL"
	out=$(sg_raw -r 8 "$sg" 37 00 18 00 00 00 00 00 08 00 2>&1)
	expect_match "$out" "00 18 00 00" "READ DEFECT DATA(10): empty lists"
	sg_raw "$sg" 04 00 00 00 00 00 >/dev/null 2>&1 || fail "FORMAT UNIT"
	sg_senddiag --test "$dev" || fail "SEND DIAGNOSTIC self-test"
	set +e
	out=$(sg_raw "$sg" 1e 00 00 00 02 00 2>&1)
	set -e
	expect_match "$out" "Invalid field in cdb" "PREVENT 10b"
	log "SBC-4 additions (VERIFY/WRITE AND VERIFY(12), PRE-FETCH, GET LBA STATUS, ORWRITE," \
		"PREVENT ALLOW, READ DEFECT DATA, FORMAT UNIT, SEND DIAGNOSTIC) passed on $dev"
}
