# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud's rbd backstore on the test bed's cluster (tests/vm/run --ceph): a
# 64 MiB image through tcm_loop passes the sg3_utils checks tcmud-scsi runs
# on a file (identity, thin provisioning, UNMAP, WRITE SAME, COMPARE AND
# WRITE, SYNCHRONIZE CACHE, bad CDBs), fio write+verify, and what the guest
# wrote is what the host reads through librbd; tcmud holds the image's
# exclusive lock while it serves it.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
. "$TCMUD_SRC/tests/vm/guest/scsi-checks.sh"
need_ceph
need_tcmud_rbd
load_target_stack
start_tcmud
rbd_image tcmud0 64M
bs=$(create_user_backstore tcmud0 rbd "$(rbd_cfg tcmud0)" $((64 << 20)) tcmud0-serial-7)
dev=$(export_via_loop "$bs")
log "tcmud rbd disk is $dev"
sg3_checks "$dev" tcmud0-serial-7 131071
fio_write_verify "$dev" 32M

head -c 1M /dev/urandom > /tmp/pattern
dd if=/tmp/pattern of="$dev" bs=1M seek=40 oflag=direct conv=fsync status=none
expect_eq "$(image_md5 tcmud0 $((40 << 20)) $((1 << 20)))" "$(md5sum < /tmp/pattern)" \
	"the image's bytes on the host after the guest wrote them"
log "the host reads through librbd what the guest wrote"
locks=$(host_ceph rbd lock ls "$TCMUD_CEPH_POOL/tcmud0")
expect_match "$locks" "1 exclusive lock" "the image's lock while tcmud serves it"
log "locks: $(echo "$locks" | tr '\n' ' ')"
kill -0 "$TCMUD_PID" || fail "tcmud died"
