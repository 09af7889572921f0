# SPDX-License-Identifier: GPL-2.0-or-later
# Transfer limits sized to the data area (docs/admin.md "Transfer size"):
# with the defaults (hw_max_sectors 128, a 1 GiB data area, max_transfer_kb
# 8192) a tcmud LUN advertises 8 MiB as MAXIMUM and OPTIMAL TRANSFER LENGTH,
# sd lets 8 MiB requests through (max_sectors_kb), one SG_IO READ/WRITE of
# 128 KiB and of 1 MiB (tcm_loop's own ceiling: 256 one-page segments) is
# GOOD with the data intact, and fio's 128k reads are one SCSI command each
# (/sys/block/sdX/stat). Then tcmud restarts with max_transfer_kb = 512: after
# a rescan the initiator sees 1024 blocks, a 1024-block READ/WRITE is GOOD and
# 1025 blocks is INVALID FIELD IN CDB with nothing written.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 64M /tmp/xfer.img
bs=$(create_user_backstore xfer file /tmp/xfer.img $((64 << 20)))
dev=$(export_via_loop "$bs")
sg=$(sg_of "$dev")
sd=${dev#/dev/}
expect_eq "$(cat "$bs/attrib/hw_max_sectors")" 128 "hw_max_sectors (the kernel's default)"
grep -q "xfer: maximum transfer 8192 KiB" "$TCMUD_LOG" || fail "tcmud did not log its limit"

vpd=$(sg_vpd -p 0xb0 "$dev")
expect_match "$vpd" "Maximum transfer length: 16384 blocks" "VPD 0xb0 MAXIMUM TRANSFER LENGTH"
expect_match "$vpd" "Optimal transfer length: 16384 blocks" "VPD 0xb0 OPTIMAL TRANSFER LENGTH"
expect_eq "$(cat "/sys/block/$sd/queue/max_sectors_kb")" 8192 "max_sectors_kb"
log "VPD 0xb0: 16384-block maximum and optimal transfer; $sd max_sectors_kb 8192"

# be32 of N, as four sg_raw CDB bytes.
be32() { printf '%02x %02x %02x %02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
	$(($1 >> 8 & 255)) $(($1 & 255)); }
# shellcheck disable=SC2046 # be32 prints four CDB bytes, one word each
# sg_io_rw LBA BLOCKS: one WRITE(16) of random data then one READ(16) of the
# same blocks through SG_IO on the sg node; the data must come back.
sg_io_rw() {
	local lba=$1 n=$2 bytes=$(($2 * 512))
	head -c "$bytes" /dev/urandom > /tmp/xfer.out
	sg_raw -s "$bytes" -i /tmp/xfer.out "$sg" 8a 00 00 00 00 00 $(be32 "$lba") \
		$(be32 "$n") 00 00 >/tmp/xfer.raw 2>&1 || { cat /tmp/xfer.raw; fail "WRITE(16) of $n blocks"; }
	sg_raw -r "$bytes" -o /tmp/xfer.in "$sg" 88 00 00 00 00 00 $(be32 "$lba") \
		$(be32 "$n") 00 00 >/tmp/xfer.raw 2>&1 || { cat /tmp/xfer.raw; fail "READ(16) of $n blocks"; }
	cmp /tmp/xfer.in /tmp/xfer.out || fail "READ(16) of $n blocks returned other data"
	log "SG_IO WRITE(16)+READ(16) of $n blocks ($((bytes >> 10)) KiB): GOOD, data intact"
}
# shellcheck disable=SC2046 # be32 prints four CDB bytes, one word each
# sg_io_refused LBA BLOCKS: READ(16) and WRITE(16) of BLOCKS are INVALID
# FIELD IN CDB, and the write changed nothing.
sg_io_refused() {
	local lba=$1 n=$2 bytes=$(($2 * 512)) out
	dd if="$dev" of=/tmp/xfer.before bs="$bytes" skip=$((lba * 512)) count=1 \
		iflag=direct,skip_bytes status=none
	head -c "$bytes" /dev/urandom > /tmp/xfer.out
	set +e
	out=$(sg_raw -r "$bytes" "$sg" 88 00 00 00 00 00 $(be32 "$lba") $(be32 "$n") 00 00 2>&1)
	expect_match "$out" "Invalid field in cdb" "READ(16) of $n blocks"
	out=$(sg_raw -s "$bytes" -i /tmp/xfer.out "$sg" 8a 00 00 00 00 00 $(be32 "$lba") \
		$(be32 "$n") 00 00 2>&1)
	expect_match "$out" "Invalid field in cdb" "WRITE(16) of $n blocks"
	set -e
	dd if="$dev" bs="$bytes" skip=$((lba * 512)) count=1 iflag=direct,skip_bytes status=none |
		cmp - /tmp/xfer.before \
		|| fail "a refused WRITE of $n blocks changed the disk"
	log "SG_IO READ(16)/WRITE(16) of $n blocks: INVALID FIELD IN CDB, nothing written"
}

sg_io_rw 100 256     # 128 KiB
sg_io_rw 1000 2048   # 1 MiB

# fio 128k random reads: one SCSI command per I/O.
before=$(awk '{print $1}' "/sys/block/$sd/stat")
fio --name=r128 --filename="$dev" --direct=1 --ioengine=libaio --iodepth=8 --rw=randread \
	--bs=128k --size=64M --io_size=8M --output-format=terse >/tmp/fio.r128 \
	|| { cat /tmp/fio.r128; fail "fio 128k randread"; }
after=$(awk '{print $1}' "/sys/block/$sd/stat")
expect_eq $((after - before)) 64 "reads completed by $sd for 64 fio reads of 128k"
log "fio: 64 reads of 128k were $((after - before)) SCSI commands"

# The cap in tcmud.conf, applied when the restarted daemon takes the device over.
echo "max_transfer_kb = 512" > /tmp/xfer.conf
kill -9 "$TCMUD_PID"
wait "$TCMUD_PID" 2>/dev/null || true
start_tcmud -c /tmp/xfer.conf
# Taken over (tcmudctl's state); the limit itself is read from VPD 0xb0.
wait_listed xfer state serving
echo 1 > "/sys/block/$sd/device/rescan"
vpd=$(sg_vpd -p 0xb0 "$dev")
expect_match "$vpd" "Maximum transfer length: 1024 blocks" "capped MAXIMUM TRANSFER LENGTH"
expect_eq "$(cat "/sys/block/$sd/queue/max_sectors_kb")" 512 "max_sectors_kb under the cap"
sg_io_rw 4000 1024         # the maximum
sg_io_refused 8000 1025    # the maximum + 1 block
kill -0 "$TCMUD_PID" || fail "tcmud died"
