# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud answers sg3_utils the way a SCSI initiator expects, on the stock
# kernel: identity and limits (VPD 0x83, 0xb0), capacity with thin
# provisioning, UNMAP and WRITE SAME(16)+UNMAP reading back zeroes,
# COMPARE AND WRITE (match, then miscompare with the right sense),
# SYNCHRONIZE CACHE, and bad CDBs failed with the right sense while the
# daemon keeps serving (tests/vm/guest/scsi-checks.sh, which tcmud-mq runs
# on every queue count too).
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/scsi-checks.sh"
load_target_stack
start_tcmud
truncate -s 64M /tmp/scsi.img
bs=$(create_user_backstore scsi0 file /tmp/scsi.img $((64 << 20)) scsi0-serial-42)
dev=$(export_via_loop "$bs")
log "tcmud disk is $dev ($(sg_of "$dev"))"
sg3_checks "$dev" scsi0-serial-42 131071
sg3_sbc4_checks "$dev"
kill -0 "$TCMUD_PID" || fail "tcmud died"
