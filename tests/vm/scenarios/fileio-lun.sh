# SPDX-License-Identifier: GPL-2.0-or-later
# LIO's in-kernel fileio backstore exported through tcm_loop: the physical
# reference every TCMU backstore is measured against. sg_inq and sg_readcap
# answer, and 64 MiB of checksummed writes read back intact.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
truncate -s 256M /tmp/fileio.img
bs=$(create_fileio_backstore fio0 /tmp/fileio.img $((256 << 20)))
dev=$(export_via_loop "$bs")
log "fileio disk is $dev"

inq=$(sg_inq "$dev")
expect_match "$inq" "Vendor identification: LIO-ORG" "sg_inq vendor"
cap=$(sg_readcap -l "$dev")
expect_match "$cap" "Last LBA=524287 " "sg_readcap last LBA"
expect_match "$cap" "Logical block length=512 bytes" "sg_readcap block length"
fio_write_verify "$dev" 64M
