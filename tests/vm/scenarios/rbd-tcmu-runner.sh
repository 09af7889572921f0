# SPDX-License-Identifier: GPL-2.0-or-later
# Debian's tcmu-runner rbd handler on the test bed's cluster (tests/vm/run
# --ceph): the baseline tcmud's rbd handler replaces, and the proof that the
# guest reaches the cluster. A 64 MiB image served through tcm_loop: INQUIRY
# and capacity, fio write+verify, the data read back on the host through
# librbd, and an image that does not exist refused at enable.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
need_ceph
load_target_stack
rbd_image runner0 64M
start_tcmu_runner
trap 'rc=$?; cp /var/log/tcmu/tcmu-runner.log "$TCMUD_VM_OUT/$TCMUD_SCENARIO.runner.log" 2>/dev/null || true; cleanup_scenario $rc' EXIT

cfg="$TCMUD_CEPH_POOL/runner0;conf=$CEPH_CONF"
bs=$(create_user_backstore runner0 rbd "$cfg" $((64 << 20)))
dev=$(export_via_loop "$bs")
log "tcmu-runner rbd disk is $dev"
expect_match "$(sg_inq "$dev")" "Vendor identification: LIO-ORG" "sg_inq vendor"
expect_match "$(sg_readcap -l "$dev")" "Last LBA=131071 " "sg_readcap last LBA"
fio_write_verify "$dev" 32M

head -c 1M /dev/urandom > /tmp/pattern
dd if=/tmp/pattern of="$dev" bs=1M seek=40 oflag=direct conv=fsync status=none
expect_eq "$(image_md5 runner0 $((40 << 20)) $((1 << 20)))" "$(md5sum < /tmp/pattern)" \
	"the image's bytes on the host after the guest wrote them"
log "the host reads through librbd what the guest wrote"
log "locks: $(host_ceph rbd lock ls "$TCMUD_CEPH_POOL/runner0" | tr '\n' ' ')"

# An image that does not exist: the handler's open fails and tcmu-runner's
# netlink reply fails the kernel's enable.
set +e
out=$(try_create_user_backstore 120 missing0 rbd "$TCMUD_CEPH_POOL/nosuch;conf=$CEPH_CONF" $((64 << 20)))
rc=$?
set -e
[ $rc -ne 124 ] || fail "the enable of a missing image hung"
[ $rc -ne 0 ] || fail "a backstore on a missing image was enabled"
grep -q "Could not open image nosuch" /var/log/tcmu/tcmu-runner.log ||
	fail "tcmu-runner did not report the missing image"
log "missing image refused: $(echo "$out" | head -1); tcmu-runner: $(grep -i 'nosuch\|open failed' \
	/var/log/tcmu/tcmu-runner.log | tail -2 | cut -d' ' -f4- | tr '\n' ' ')"
