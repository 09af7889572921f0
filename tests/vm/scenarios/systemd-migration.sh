# SPDX-License-Identifier: GPL-2.0-or-later
# A gateway moves from tcmu-runner to tcmud the way its administrator would,
# with tcmu-runner running: Debian's tcmu-runner, as its service, serves a
# user:rbd LUN that targetcli created and saved (tcmu-runner's cfgstring,
# /etc/ceph as on a gateway). `apt install tcmud` then replaces it (tcmu-runner
# is removed, its service stopped) and tcmud, started by the package, takes
# the running LUN over: the same /dev/sdX keeps its data and takes writes,
# with no reboot and no targetcli step; the host reads the image through
# librbd. Then the saved configuration is restored as rtslib-fb-targetctl
# does at boot (clear, then targetctl restore) and comes back served by
# tcmud with the same data and WWID. First in
# tests/vm/systemd.list: it needs tcmud not yet installed. Skipped (77)
# without the Ceph test bed or without tcmu-runner to migrate from.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
. "$TCMUD_SRC/tests/vm/guest/systemd-lib.sh"
need_ceph
dpkg -s tcmud > /dev/null 2>&1 && skip "tcmud is already installed: nothing to migrate"
[ "$(dpkg-query -W -f '${Status}' tcmu-runner 2>/dev/null)" = "install ok installed" ] ||
	skip "tcmu-runner is not installed: nothing to migrate from"
load_target_stack
name=mig0 wwn=naa.5001405000000e1f save=/etc/rtslib-fb-target/saveconfig.json

# tcmu-runner as Debian runs it (the guest masks it at every boot).
rm -f /etc/systemd/system/tcmu-runner.service
systemctl daemon-reload
systemctl start tcmu-runner
expect_eq "$(systemctl is-active tcmu-runner)" active "tcmu-runner.service"
opts=$(etc_ceph_gateway)
rbd_image $name 64M
cfg="$TCMUD_CEPH_POOL/$name$opts"
targetcli > $STATE/migration-targetcli.log 2>&1 <<EOT
/backstores/user:rbd create name=$name size=64M cfgstring=$cfg
/loopback create $wwn
/loopback/$wwn/luns create /backstores/user:rbd/$name
saveconfig
EOT
[ -d "$TARGET/core/user_0/$name" ] ||
	{ cat $STATE/migration-targetcli.log; fail "targetcli did not create user:rbd/$name under tcmu-runner"; }
grep -q "rbd/$cfg" "$save" || fail "$save lacks $name's cfgstring"
dev=$(sd_of_loopback $wwn)
head -c 4M /dev/urandom > $STATE/mig-before
dd if=$STATE/mig-before of="$dev" bs=1M seek=8 oflag=direct conv=fsync status=none
sum_before=$(md5sum < $STATE/mig-before)
# The identity initiators keep (multipath's WWID, ESXi's naa.): the kernel's
# wwid, from VPD 0x83's NAA designator. tcmu-runner also reports a vendor
# specific designator holding the cfgstring, which tcmud does not hand out
# (docs/admin.md, "Moving from tcmu-runner"): the pages differ, not the WWID.
wwid_now() {  # DEV: re-read VPD 0x83 (a rescan), then the kernel's wwid
	echo 1 > "/sys/block/${1#/dev/}/device/rescan"
	cat "/sys/block/${1#/dev/}/device/wwid"
}
naa_of() { sg_vpd -p 0x83 "$1" | grep -A1 'designator type: NAA' | tail -n1 | tr -d ' '; }
wwid=$(wwid_now "$dev")
naa=$(naa_of "$dev")
sg_vpd -p 0x83 "$dev" > $STATE/vpd83-runner
runner_pid=$(systemctl show -p MainPID --value tcmu-runner)
log "tcmu-runner $runner_pid serves $name as $dev; locks: $(host_ceph rbd lock ls "$TCMUD_CEPH_POOL/$name" | tr '\n' ' ')"

# The migration itself: one apt command, the LUN in use.
rm -f /var/lib/man-db/auto-update
t0=$(date +%s)
apt_local install "$TCMUD_DEBS"/tcmud_*_amd64.deb > $STATE/apt-migration.log 2>&1 ||
	{ cat $STATE/apt-migration.log; fail "apt install of tcmud over a running tcmu-runner"; }
log "apt install took $(( $(date +%s) - t0 )) s: $(grep -E '^(Removing|Setting up) (tcmu-runner|tcmud)' $STATE/apt-migration.log | tr '\n' ' ')"
[ "$(dpkg-query -W -f '${Status}' tcmu-runner 2>/dev/null)" != "install ok installed" ] ||
	fail "tcmu-runner is still installed"
kill -0 "$runner_pid" 2>/dev/null && fail "tcmu-runner ($runner_pid) still runs after the install"
pid=$(wait_tcmud_active)
# What ceph-iscsi needs of "tcmu-runner": its package dependency is met by
# tcmud (apt would otherwise install tcmu-runner back), and its units'
# Wants=/After=tcmu-runner.service name tcmud.
sat=$(apt-get satisfy --dry-run 'tcmu-runner (>= 1.4.0)' 2>&1) ||
	{ echo "$sat"; fail "apt-get satisfy 'tcmu-runner (>= 1.4.0)'"; }
expect_match "$sat" "0 upgraded, 0 newly installed, 0 to remove" \
	"ceph-iscsi's dependency tcmu-runner (>= 1.4.0) with tcmud installed"
expect_eq "$(systemctl show -p Id --value tcmu-runner.service)" tcmud.service "tcmu-runner.service's unit"
expect_eq "$(systemctl is-active tcmu-runner.service)" active "tcmu-runner.service (tcmud)"
TCMUDCTL=/usr/sbin/tcmudctl
wait_listed $name subtype rbd
# tcmu-runner let go of the image's lock when it closed it; a lock left by
# a holder that died is broken by librbd once the OSD drops its watch (30 s).
for _ in $(seq 120); do [ "$(listed $name state)" = owner ] && break; sleep 0.5; done
expect_eq "$(listed $name state)" owner "tcmud's state of $name after the takeover"
journalctl -b -u tcmud -o cat --no-pager > $STATE/migration-journal
log "tcmud $pid: $(grep -m1 "rbd/$name: serving rbd image" $STATE/migration-journal)"

# The same disk, without a reboot: its data, new writes, its identity.
sum=$(dd if="$dev" bs=1M skip=8 count=4 iflag=direct status=none | md5sum)
expect_eq "$sum" "$sum_before" "$dev's data after tcmud took it over"
fio_write_verify "$dev" 8M
head -c 1M /dev/urandom > $STATE/mig-after
dd if=$STATE/mig-after of="$dev" bs=1M seek=20 oflag=direct conv=fsync status=none
expect_eq "$(image_md5 $name $((20 << 20)) $((1 << 20)))" "$(md5sum < $STATE/mig-after)" \
	"the image's bytes on the host after tcmud's write"
expect_eq "$(wwid_now "$dev")" "$wwid" "$dev's wwid after the takeover"
expect_eq "$(naa_of "$dev")" "$naa" "$dev's NAA designator after the takeover"
log "$dev: taken over by tcmud $pid in place, data and $wwid unchanged"

# The saved configuration (tcmu-runner's), restored as at boot.
targetcli clearconfig confirm=True > /dev/null
[ ! -d "$TARGET/core/user_0/$name" ] || fail "clearconfig left $name"
targetctl restore "$save"
dev=$(sd_of_loopback $wwn)
wait_listed $name state owner
expect_eq "$(dd if="$dev" bs=1M skip=8 count=4 iflag=direct status=none | md5sum)" "$sum_before" \
	"data of the restored LUN"
expect_eq "$(wwid_now "$dev")" "$wwid" "wwid of the restored LUN"
expect_eq "$(tcmud_pid)" "$pid" "tcmud's main PID"
log "tcmu-runner's saved configuration restored under tcmud: $dev, same data and wwid"

# Leave the later scenarios an empty target and no saved LUN.
targetcli clearconfig confirm=True > /dev/null
targetcli saveconfig > /dev/null
rm -f $STATE/mig-before $STATE/mig-after
