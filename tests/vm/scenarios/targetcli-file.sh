# SPDX-License-Identifier: GPL-2.0-or-later
# targetcli drives tcmud over a real system bus, as an administrator would:
# a user:file backstore created with targetcli (CheckConfig over D-Bus),
# exported through tcm_loop, saved, cleared and restored with targetctl
# (what the boot unit runs). The disk comes back with the same data and the
# same VPD 0x83 identity. targetcli is 30-45 s per start under TCG, so its
# commands go in as few invocations as possible.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack

# A system bus that knows our policy (the guest's / is the host's, read-only
# under a writable overlay, so the copy is thrown away at power-off).
mkdir -p /run/dbus /etc/dbus-1/system.d
cp "$TCMUD_SRC/configs/org.kernel.TCMUService1.conf" /etc/dbus-1/system.d/
# In the background rather than forked, so it is this shell's child and the
# exit trap can wait for it; stopped after tcmud (the bus leaving first would
# only make tcmud warn that its connection closed).
dbus-daemon --system --nofork &
dbus_pid=$!
for _ in $(seq 50); do
	[ -S /run/dbus/system_bus_socket ] && break
	sleep 0.1
done
[ -S /run/dbus/system_bus_socket ] || fail "no system bus socket"

start_tcmud
stop_on_exit $dbus_pid
owned=false
for _ in $(seq 50); do
	if gdbus call --system --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
		--method org.freedesktop.DBus.NameHasOwner org.kernel.TCMUService1 | grep -q true; then
		owned=true
		break
	fi
	sleep 0.2
done
$owned || fail "tcmud does not own org.kernel.TCMUService1 on the system bus"
handlers=$(gdbus call --system --dest org.kernel.TCMUService1 --object-path /org/kernel/TCMUService1 \
	--method org.freedesktop.DBus.ObjectManager.GetManagedObjects)
expect_match "$handlers" "/org/kernel/TCMUService1/file" "GetManagedObjects"

# sd_of_loopback WWN: waits for the /dev/sdX of LUN 0 behind a tcm_loop target.
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

wwn=naa.5001405000000cfe
save=/etc/rtslib-fb-target/saveconfig.json
truncate -s 64M /tmp/disk0.img

log "targetcli: a missing file is refused through CheckConfig"
out=$(targetcli /backstores/user:file create name=bad size=64M cfgstring=/tmp/missing.img 2>&1 || true)
expect_match "$out" "cfgstring invalid: .*/tmp/missing.img" "targetcli create with a missing file"
[ ! -d "$TARGET/core/user_0/bad" ] || fail "a refused backstore was created anyway"

log "targetcli: create, export, save"
targetcli <<EOT
/backstores/user:file create name=disk0 size=64M cfgstring=/tmp/disk0.img
/loopback create $wwn
/loopback/$wwn/luns create /backstores/user:file/disk0
saveconfig
EOT
[ -d "$TARGET/core/user_0/disk0" ] || fail "targetcli did not create user:file/disk0"
expect_eq "$(grep -c '"plugin": "user"' "$save")" 1 "user backstores in $save"
dev=$(sd_of_loopback $wwn)
log "targetcli's disk is $dev"

head -c 4M /dev/urandom >/tmp/pattern
dd if=/tmp/pattern of="$dev" bs=1M seek=8 oflag=direct conv=fsync status=none
vpd_before=$(sg_vpd -p 0x83 "$dev")
expect_match "$vpd_before" "designator type: NAA" "VPD 0x83 before"
sum_before=$(md5sum </tmp/pattern)

log "targetcli clearconfig"
targetcli clearconfig confirm=True
[ ! -d "$TARGET/core/user_0/disk0" ] || fail "clearconfig left user_0/disk0"
[ ! -d "$TARGET/loopback/$wwn" ] || fail "clearconfig left the loopback target"

log "targetctl restore $save"
targetctl restore "$save"
dev=$(sd_of_loopback $wwn)
sum_after=$(dd if="$dev" bs=1M skip=8 count=4 iflag=direct status=none | md5sum)
expect_eq "$sum_after" "$sum_before" "data after restore"
expect_eq "$(sg_vpd -p 0x83 "$dev")" "$vpd_before" "VPD 0x83 after restore"
log "restored disk $dev has the same data and identity"

# Deleting a backstore under I/O: fio on disk0 gets errors once its LUN goes
# (expected: ENODEV from the offlined disk, ENOSPC for writes the block layer
# refuses once the dying disk's capacity is 0, see docs/daemon.md); the
# kernel logs no oops/WARN/hang (the verdict reads kmsg); tcmud releases
# disk0 and keeps serving disk1, whose write+verify passes run through the
# delete.
log "targetcli delete of user:file/disk0 under I/O, disk1 verifying throughout"
truncate -s 64M /tmp/disk1.img
# In an HBA of its own: rtslib removes disk0's HBA with disk0.
dev1=$(export_via_loop \
	"$(USER_BACKSTORE_HBA=user_9 create_user_backstore disk1 file /tmp/disk1.img $((64 << 20)))")
fio --name=busy --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
	--rw=randrw --bs=4k --time_based --runtime=300 --output=/dev/null \
	2>/tmp/busy.err & busy=$!
fio_verify_loop "$dev1" 16M /tmp/disk1.stop & keep=$!
mark_kmsg targetcli-file-delete
sleep 2
kill -0 $busy 2>/dev/null || fail "fio on disk0 ended before the delete"
targetcli /backstores/user:file delete disk0
[ ! -d "$TARGET/core/user_0/disk0" ] || fail "targetcli left user_0/disk0"
wait $busy && fail "fio kept running on a deleted disk"
errors=$(grep -o 'error on file [^:]*: [^:]*' /tmp/busy.err | sort | uniq -c | tr -s ' \n' ' ')
log "fio on the deleted disk:$errors"
# The disk going away, nothing else. Its capacity drops to 0 first: a
# write past the new end is ENOSPC, and a bio that raced the drop is
# refused with EIO and "attempt to access beyond end of device ...
# limit=0"; an EIO without such a line, or an "I/O error, dev" line,
# would mean a command failed.
if grep 'io_u error' /tmp/busy.err | grep -qv 'No such device\|No space left on device\|Input/output error'; then
	fail "fio saw other errors than ENODEV/ENOSPC/EIO: $errors"
fi
sd=${dev#/dev/}
eio=$(grep -c 'io_u error.*Input/output error' /tmp/busy.err || true)
past_end=$(klog | grep -c "$sd: rw=.*limit=0" || true)
# (those lines are rate-limited: at least one, not one per EIO)
[ "$eio" = 0 ] || [ "$past_end" -gt 0 ] ||
	fail "fio saw $eio EIO, and no bio was refused past the gone disk's end: $(klog | grep "$sd" | tail -n 5)"
! klog | grep -q "I/O error, dev $sd," || fail "a command on $sd failed: $(klog | grep "I/O error, dev $sd," | head -n 3)"
wait_listed disk0 name ""  # released: tcmud no longer serves it
stats=$(grep "disk0: queue 0: stopped after" "$TCMUD_LOG" | tail -1)
expect_match "$stats" "stopped after [1-9][0-9]* commands" "disk0's last queue stats"
kill -0 "$TCMUD_PID" || fail "tcmud died when disk0 was deleted under I/O"
touch /tmp/disk1.stop
wait $keep || fail "disk1's write+verify failed across disk0's delete"
log "disk1 verified throughout; disk0 ${stats#*disk0: }"
