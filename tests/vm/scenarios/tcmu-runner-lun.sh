# SPDX-License-Identifier: GPL-2.0-or-later
# Debian's tcmu-runner serving a TCMU (user:) backstore through tcm_loop: the
# incumbent we replace. Its qcow handler serves a raw image as a plain disk
# (Debian ships no "file" handler). Same checks as the fileio scenario.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
mkdir -p /etc/tcmu /var/log/tcmu
tcmu-runner -l /var/log/tcmu &
runner=$!
stop_on_exit $runner
sleep 1
kill -0 $runner || fail "tcmu-runner did not start"

truncate -s 256M /tmp/raw.img
bs=$(create_user_backstore raw0 qcow /tmp/raw.img $((256 << 20)))
dev=$(export_via_loop "$bs")
log "tcmu-runner disk is $dev"
grep -q "treat as raw" /var/log/tcmu/tcmu-runner.log || fail "qcow handler did not open the raw image"

inq=$(sg_inq "$dev")
expect_match "$inq" "Vendor identification: LIO-ORG" "sg_inq vendor"
cap=$(sg_readcap -l "$dev")
expect_match "$cap" "Last LBA=524287 " "sg_readcap last LBA"
fio_write_verify "$dev" 64M
