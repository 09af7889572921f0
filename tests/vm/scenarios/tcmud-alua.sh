# SPDX-License-Identifier: GPL-2.0-or-later
# ALUA as a gateway's tcmud reports it, read by the real initiator stack.
# The LUN is laid out as ceph-iscsi lays it out on its first gateway
# (implicit failover): group "ao" (id 1) holds this node's port, here a
# tcm_loop LUN the guest's sd driver uses; group "ano2" (id 2) holds the
# second gateway's port, an iSCSI portal group that is disabled on this
# node. Checked: INQUIRY's TPGS, VPD 0x83's relative target port and port
# group designators, REPORT TARGET PORT GROUPS (sg_rtpg) in both formats,
# Linux's ALUA device handler attaching with those values, and data still
# flowing; before the groups exist, no ALUA at all (TPGS 0, no RTPG); with
# explicit transitions configured, still implicit and one warning.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
modprobe iscsi_target_mod 2>/dev/null || skip "no iscsi_target_mod"
modprobe scsi_dh_alua 2>/dev/null || true
start_tcmud
truncate -s 64M /tmp/alua.img
bs=$(create_user_backstore alua0 file /tmp/alua.img $((64 << 20)))
sd=$(export_via_loop "$bs")
sg=$(sg_of "$sd")
expect_match "$(sg_inq "$sd")" "TPGS=0" "INQUIRY before any group"
sg_rtpg "$sg" >/tmp/rtpg.out 2>&1 && fail "RTPG answered without ALUA groups: $(cat /tmp/rtpg.out)"
expect_match "$(cat /tmp/rtpg.out)" "[Ii]llegal|bad field|not supported" "RTPG without groups"

# The other gateway's portal group, as ceph-iscsi makes it on this node:
# the same LUN in tpgt_2 of the shared IQN, left disabled.
iqn=iqn.2003-01.org.tcmud.test:gw
itpg=$TARGET/iscsi/$iqn/tpgt_2
mkdir -p "$itpg/lun/lun_0"
ln -s "$bs" "$itpg/lun/lun_0/alua0"
expect_eq "$(cat "$itpg/enable")" 0 "the other gateway's portal group is disabled here"
# This node's port: the tcm_loop portal group export_via_loop made.
for ltpg in "$TARGET"/loopback/naa.*/tpgt_1; do break; done
# make_group NAME ID PREFERRED: an implicit ALUA group (ceph-iscsi's
# alua_create_implicit_group: AO/ANO supported, no non-optimized delay);
# its state is set once a LUN is in it.
make_group() {
	local g=$bs/alua/$1
	mkdir "$g"
	echo "$2" > "$g/tg_pt_gp_id"
	echo 1 > "$g/alua_access_type"
	echo 0 > "$g/nonop_delay_msecs"
	echo 1 > "$g/alua_support_active_nonoptimized"
	echo "$3" > "$g/preferred"
	echo 45 > "$g/implicit_trans_secs"
}
make_group ao 1 1
make_group ano2 2 0
echo ao > "$ltpg/lun/lun_0/alua_tg_pt_gp"
echo ano2 > "$itpg/lun/lun_0/alua_tg_pt_gp"
echo 0 > "$bs/alua/ao/alua_access_state"
echo 1 > "$bs/alua/ano2/alua_access_state"
rtpi_local=$(cat "$ltpg/lun/lun_0/statistics/scsi_port/indx")
rtpi_other=$(cat "$itpg/lun/lun_0/statistics/scsi_port/indx")
# (members ends each line with a NUL as well as a newline.)
log "groups: ao (1) = $(tr -d '\0' < "$bs/alua/ao/members") rtpi $rtpi_local;" \
	"ano2 (2) = $(tr -d '\0' < "$bs/alua/ano2/members") rtpi $rtpi_other"

# The initiator sees it on a fresh scan, as a gateway's LUN is first seen.
addr=$(cat "$ltpg/address")
mark_kmsg tcmud-alua
echo 1 > "/sys/block/${sd#/dev/}/device/delete"
echo "- - -" > "/sys/class/scsi_host/host${addr%%:*}/scan"
sd=
for _ in $(seq "$(scaled 50)"); do
	sd=$(ls "/sys/bus/scsi/devices/$addr:0/block" 2>/dev/null || true)
	[ -n "$sd" ] && [ -b "/dev/$sd" ] && break
	sleep 0.2
done
[ -n "$sd" ] || fail "no disk after the rescan of $addr:0"
sd=/dev/$sd
sg=$(sg_of "$sd")

expect_match "$(sg_inq "$sd")" "TPGS=1" "INQUIRY: implicit ALUA"
vpd=$(sg_vpd -p di "$sg")
log "VPD 0x83:"$'\n'"$vpd"
expect_match "$vpd" "Relative target port: 0x0*$(printf '%x' "$rtpi_local")" "VPD 0x83 relative target port"
expect_match "$vpd" "Target port group: 0x0*1" "VPD 0x83 target port group"
rtpg=$(sg_rtpg -d "$sg") || fail "sg_rtpg"
log "REPORT TARGET PORT GROUPS:"$'\n'"$rtpg"
flat=$(echo "$rtpg" | tr '\n' ' ' | tr -s ' ')
expect_match "$flat" "target port group id : 0x1 , Pref=1.*active/optimized.*Relative target port ids: 0x0*$(printf '%x' "$rtpi_local") " "group 1"
expect_match "$flat" "target port group id : 0x2 , Pref=0.*active/non optimized.*Relative target port ids: 0x0*$(printf '%x' "$rtpi_other")" "group 2"
ext=$(sg_rtpg -e -d "$sg") || fail "sg_rtpg -e"
expect_match "$(echo "$ext" | tr '\n' ' ')" "[Ii]mplicit transition time: 45" "extended header"

# Linux's ALUA handler took the LUN with what tcmud said.
alua=$(klog | grep -i "alua" || true)
log "kernel:"$'\n'"$alua"
expect_match "$alua" "port group 01 state A preferred" "scsi_dh_alua's view of the path"
expect_eq "$(cat "/sys/block/${sd#/dev/}/device/dh_state" 2>/dev/null || echo none)" alua "device handler"

# Data flows as before.
fio_write_verify "$sd" 8M

# ceph-iscsi's explicit failover sets "Implicit and Explicit": tcmud has no
# SET TARGET PORT GROUPS, keeps reporting implicit, and says so once.
echo 3 > "$bs/alua/ao/alua_access_type"
expect_match "$(sg_inq "$sd")" "TPGS=1" "INQUIRY with explicit transitions configured"
sg_rtpg "$sg" > /dev/null || fail "sg_rtpg with explicit transitions configured"
grep -q "ALUA group 1 allows explicit transitions" "$TCMUD_LOG" ||
	fail "no warning about explicit ALUA in $TCMUD_LOG"
expect_eq "$(grep -c "allows explicit transitions" "$TCMUD_LOG")" 1 "warnings about explicit ALUA"
rm -f "$itpg/lun/lun_0/alua0"
rmdir "$itpg/lun/lun_0" "$itpg" "$TARGET/iscsi/$iqn"
log "ALUA as configured: reported, and taken by the initiator"
