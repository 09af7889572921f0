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
