# SPDX-License-Identifier: GPL-2.0-or-later
# Implicit ALUA failover between two gateways of one image, through the
# real kernel and initiator. The host plays gateway 2 the way a
# tcmu-runner gateway does: it holds the image's exclusive lock
# (rbd_lock_holder, the agent's "hold") and records its target port group
# in the lock tag (image-meta tcmu_rbd_locker_tag, tcmu-runner's format).
# The guest's tcmud is gateway 1, with ceph-iscsi's implicit layout in
# configfs: group "ao" (id 1, its tcm_loop port) and "ano2" (id 2, gateway
# 2's portal group, disabled here). Checked:
# - REPORT TARGET PORT GROUPS follows the lock, not the configuration:
#   group 2 active/optimized while the host holds the lock;
# - a write through this gateway (the initiator's path choice) takes the
#   lock over: BUSY, retried by Linux's SCSI layer, then written; the
#   host's client is blocklisted, the tag names group 1, RTPG reports
#   group 1 active/optimized, and the host reads what the guest wrote.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
need_ceph
need_tcmud_rbd
load_target_stack
modprobe iscsi_target_mod 2>/dev/null || skip "no iscsi_target_mod"
start_tcmud
ctl="$TCMUD_BUILD/tools/tcmudctl/tcmudctl"
name=alua1
image=$TCMUD_CEPH_POOL/$name
rbd_image $name 64M
# lock_address: the holder's address as rbd lock ls shows it (and as
# librbd's lock owners name it, which the tag must repeat).
lock_address() {
	python3 -c 'import json, sys
l = json.loads(sys.argv[1])
l = l if isinstance(l, list) else list(l.values())
print(l[0]["address"] if l else "")' "$(host_ceph rbd lock ls --format json "$image")"
}
state_of() { "$ctl" list --json | jq -r ".devices[] | select(.name == \"$name\") | .state"; }
# group_state ID: that group's asymmetric access state as sg_rtpg decodes it.
group_state() {
	sg_rtpg -d "$sg" | awk -v id="0x$1" '$0 ~ "target port group id : " id " ," {g = 1; next}
		g && /asymmetric access state/ {sub(/.*\(/, ""); sub(/\).*/, ""); print; exit}'
}

# Gateway 2 (the host) owns the image and says so in the tag.
host_ceph hold "$image" 4096 || fail "the host's gateway could not take the lock"
host_address=$(lock_address)
[ -n "$host_address" ] || fail "no lock holder after hold"
host_ceph rbd image-meta set "$image" tcmu_rbd_locker_tag "tcmu_tag=2,rbd_client=$host_address" ||
	fail "setting the host's lock tag"

# Gateway 1: tcmud, standby behind the host, with ceph-iscsi's groups.
bs=$(create_user_backstore $name rbd "$(rbd_cfg $name)" $((64 << 20)))
dev=$(export_via_loop "$bs")
sg=$(sg_of "$dev")
for ltpg in "$TARGET"/loopback/naa.*/tpgt_1; do break; done
iqn=iqn.2003-01.org.tcmud.test:gw
itpg=$TARGET/iscsi/$iqn/tpgt_2
mkdir -p "$itpg/lun/lun_0"
ln -s "$bs" "$itpg/lun/lun_0/$name"
for g in "ao 1 1" "ano2 2 0"; do
	read -r gname gid pref <<<"$g"
	mkdir "$bs/alua/$gname"
	echo "$gid" > "$bs/alua/$gname/tg_pt_gp_id"
	echo 1 > "$bs/alua/$gname/alua_access_type"
	echo 0 > "$bs/alua/$gname/nonop_delay_msecs"
	echo "$pref" > "$bs/alua/$gname/preferred"
done
echo ao > "$ltpg/lun/lun_0/alua_tg_pt_gp"
echo ano2 > "$itpg/lun/lun_0/alua_tg_pt_gp"
echo 0 > "$bs/alua/ao/alua_access_state"
echo 1 > "$bs/alua/ano2/alua_access_state"
expect_eq "$(state_of)" standby "tcmud's state behind the host's lock"

# RTPG follows the lock: the host's group 2 is active/optimized although
# the configuration says group 1 (tcmud reads the tag within a lock poll).
for _ in $(seq 20); do [ "$(group_state 2)" = "active/optimized" ] && break; sleep 0.5; done
expect_eq "$(group_state 2)" "active/optimized" "group 2 (the lock holder's) before the failover"
expect_eq "$(group_state 1)" "active/non optimized" "group 1 before the failover"

# The initiator writes through gateway 1: the lock comes here.
head -c 1M /dev/urandom > /tmp/alua.data
t0=$(date +%s%N)
timeout 120 dd if=/tmp/alua.data of="$dev" bs=1M seek=8 oflag=direct conv=fsync status=none ||
	fail "the write through gateway 1 did not complete"
log "write through gateway 1: $(( ($(date +%s%N) - t0) / 1000000 )) ms (BUSY until the takeover)"
expect_eq "$(state_of)" owner "tcmud's state after the write"
tcmud_log_since 0 "$name.*implicit ALUA failover" | head -2
[ -n "$(tcmud_log_since 0 "$name.*implicit ALUA failover: took the exclusive lock")" ] ||
	fail "tcmud did not log the takeover"
new_address=$(lock_address)
[ "$new_address" != "$host_address" ] || fail "the lock is still the host's"
host_ceph ceph osd blocklist ls 2>/dev/null | grep -q "${host_address%%/*}/${host_address#*/}" ||
	fail "the host's client ($host_address) was not blocklisted"
tag=$(host_ceph rbd image-meta get "$image" tcmu_rbd_locker_tag)
expect_eq "$tag" "tcmu_tag=1,rbd_client=$new_address" "the lock tag after the failover"
expect_eq "$(group_state 1)" "active/optimized" "group 1 after the failover"
expect_eq "$(group_state 2)" "active/non optimized" "group 2 after the failover"
expect_eq "$(image_md5 $name $((8 << 20)) $((1 << 20)))" "$(md5sum < /tmp/alua.data)" \
	"the image's bytes on the host after the failover"
host_ceph release "$image" >/dev/null 2>&1 || true
rm -f "$itpg/lun/lun_0/$name"
rmdir "$itpg/lun/lun_0" "$itpg" "$TARGET/iscsi/$iqn"
log "implicit failover: RTPG followed the lock, a write at gateway 1 took it over"
