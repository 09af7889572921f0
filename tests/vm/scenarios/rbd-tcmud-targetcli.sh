# SPDX-License-Identifier: GPL-2.0-or-later
# targetcli drives tcmud's rbd backstore over a real system bus, as an
# administrator would: user:rbd with tcmu-runner's cfgstring (what a saved
# configuration from it holds), a bad cfgstring refused through CheckConfig
# and a missing image refused at creation (targetcli fails, nothing stays),
# create + export + saveconfig, clearconfig, targetctl restore (same data,
# same VPD 0x83 identity), delete. targetcli is 30-45 s per start under
# TCG, so its commands go in as few invocations as possible.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
need_ceph
need_tcmud_rbd
load_target_stack
rbd_image tgt0 64M

mkdir -p /run/dbus /etc/dbus-1/system.d
cp "$TCMUD_SRC/configs/org.kernel.TCMUService1.conf" /etc/dbus-1/system.d/
dbus-daemon --system --nofork &
dbus_pid=$!
for _ in $(seq 50); do [ -S /run/dbus/system_bus_socket ] && break; sleep 0.1; done
[ -S /run/dbus/system_bus_socket ] || fail "no system bus socket"
start_tcmud
stop_on_exit $dbus_pid
for _ in $(seq 50); do
	gdbus call --system --dest org.kernel.TCMUService1 --object-path /org/kernel/TCMUService1 \
		--method org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null |
		grep -q "/org/kernel/TCMUService1/rbd" && break
	sleep 0.2
done
gdbus call --system --dest org.kernel.TCMUService1 --object-path /org/kernel/TCMUService1 \
	--method org.freedesktop.DBus.ObjectManager.GetManagedObjects | grep -q "TCMUService1/rbd" ||
	fail "tcmud offers no rbd handler on the system bus"

sd_of_loopback() {
	local addr sd
	for _ in $(seq 150); do
		addr=$(cat "$TARGET/loopback/$1/tpgt_1/address" 2>/dev/null || true)
		sd=""
		[ -z "$addr" ] || sd=$(ls "/sys/bus/scsi/devices/$addr:0/block" 2>/dev/null || true)
		[ -n "$sd" ] && [ -b "/dev/$sd" ] && { echo "/dev/$sd"; return 0; }
		sleep 0.2
	done
	fail "no /dev/sdX behind loopback $1"
}
wwn=naa.5001405000000cbd
save=/etc/rtslib-fb-target/saveconfig.json
pool=$TCMUD_CEPH_POOL

log "targetcli: a bad cfgstring (CheckConfig) and a missing image (netlink) are refused"
out=$(targetcli <<EOT 2>&1 || true
/backstores/user:rbd create name=bad0 size=64M cfgstring=$pool/tgt0;conf=$CEPH_CONF;bogus=1
/backstores/user:rbd create name=bad1 size=64M cfgstring=$pool/nosuch;conf=$CEPH_CONF
EOT
)
log "targetcli said: $(echo "$out" | tr '\n' ' ')"
expect_match "$out" "bogus" "targetcli create with an unknown option"
[ ! -d "$TARGET/core/user_0/bad0" ] || fail "a backstore with a bad cfgstring was created"
[ ! -d "$TARGET/core/user_0/bad1" ] || fail "a backstore on a missing image was created"
grep -E "bad1.*nosuch" "$TCMUD_LOG" | tail -1 || fail "tcmud's log does not name the missing image"

log "targetcli: create, export, save"
targetcli <<EOT
/backstores/user:rbd create name=tgt0 size=64M cfgstring=$pool/tgt0;conf=$CEPH_CONF
/loopback create $wwn
/loopback/$wwn/luns create /backstores/user:rbd/tgt0
saveconfig
EOT
[ -d "$TARGET/core/user_0/tgt0" ] || fail "targetcli did not create user:rbd/tgt0"
grep -q "rbd/$pool/tgt0;conf=$CEPH_CONF" "$save" || fail "$save lacks tgt0's config"
dev=$(sd_of_loopback $wwn)
head -c 4M /dev/urandom >/tmp/pattern
dd if=/tmp/pattern of="$dev" bs=1M seek=8 oflag=direct conv=fsync status=none
vpd_before=$(sg_vpd -p 0x83 "$dev")
sum_before=$(md5sum </tmp/pattern)

log "targetcli clearconfig, targetctl restore"
targetcli clearconfig confirm=True
[ ! -d "$TARGET/core/user_0/tgt0" ] || fail "clearconfig left user_0/tgt0"
targetctl restore "$save"
dev=$(sd_of_loopback $wwn)
sum_after=$(dd if="$dev" bs=1M skip=8 count=4 iflag=direct status=none | md5sum)
expect_eq "$sum_after" "$sum_before" "data after restore"
expect_eq "$(sg_vpd -p 0x83 "$dev")" "$vpd_before" "VPD 0x83 after restore"
expect_eq "$(image_md5 tgt0 $((8 << 20)) $((4 << 20)))" "$sum_before" "the image's bytes on the host"
log "restored disk $dev: same data and identity"

targetcli /backstores/user:rbd delete tgt0
[ ! -d "$TARGET/core/user_0/tgt0" ] || fail "targetcli delete left user_0/tgt0"
for _ in $(seq 50); do grep -q "tgt0: released" "$TCMUD_LOG" && break; sleep 0.2; done
grep -q "tgt0: released" "$TCMUD_LOG" || fail "tcmud did not release tgt0"
locks=$(host_ceph rbd lock ls "$pool/tgt0")
[[ ! $locks =~ "exclusive lock" ]] || fail "tgt0 still locked after its delete: $locks"
kill -0 "$TCMUD_PID" || fail "tcmud died"
