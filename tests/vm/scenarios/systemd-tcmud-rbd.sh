# SPDX-License-Identifier: GPL-2.0-or-later
# The package serves Ceph RBD under the unit it ships (systemd guest with the
# Ceph test bed: tests/vm/run --systemd --ceph STORE; after systemd-tcmud
# installed the package, or alone, installing it first): the packaged tcmud
# has the rbd handler (librbd linked), and the unit's sandbox lets librbd
# reach the cluster (an AF_UNIX/AF_NETLINK-only RestrictAddressFamilies or
# IPAddressDeny=any fails the enable here). The guest is set up as an
# administrator would: /etc/ceph/ceph.conf and the client.tcmud keyring
# (cephx, "profile rbd"); a user:rbd backstore through tcm_loop passes fio
# write+verify, the host reads the guest's bytes through librbd, and the
# LUN is the systemd-managed daemon's (tcmudctl list, its journal, the
# image's lock). Skipped (77) without the Ceph test bed.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
. "$TCMUD_SRC/tests/vm/guest/systemd-lib.sh"
need_ceph
load_target_stack
name=rbdsd0
# The packaged tcmudctl, which talks to the packaged daemon's socket.
TCMUDCTL=/usr/sbin/tcmudctl
if ! dpkg -s tcmud > /dev/null 2>&1; then
	rm -f /var/lib/man-db/auto-update
	log "apt install $(basename "$TCMUD_DEBS"/tcmud_*_amd64.deb)"
	apt_local install "$TCMUD_DEBS"/tcmud_*_amd64.deb > $STATE/apt-rbd.log 2>&1 ||
		{ cat $STATE/apt-rbd.log; fail "apt install of the tcmud package"; }
fi
pid=$(wait_tcmud_active)
# (grep reads all of ldd's output: see need_tcmud_rbd.)
ldd /usr/sbin/tcmud | grep librbd > /dev/null ||
	fail "the packaged tcmud has no rbd handler (not linked with librbd)"
log "tcmud $pid (systemd), $(systemctl show -p RestrictAddressFamilies tcmud)," \
	"$(systemctl show -p IPAddressDeny tcmud)"

opts=$(etc_ceph_gateway)
rbd_image $name 64M
cfg="$TCMUD_CEPH_POOL/$name$opts"
t0=$(date +%s)
set +e
out=$(try_create_user_backstore "$(scaled 120)" $name rbd "$cfg" $((64 << 20)) $name-serial)
rc=$?
set -e
if [ $rc != 0 ]; then
	echo "the enable said: $out" >&2
	journalctl -b -u tcmud -o cat --no-pager | grep -E "rbd/$name|rbd:" | tail -n 10 >&2 || true
	fail "the packaged tcmud under the shipped unit could not serve rbd image $name (exit $rc after $(($(date +%s) - t0)) s)"
fi
bs=$TARGET/core/user_0/$name
log "user:rbd $name enabled in $(($(date +%s) - t0)) s"
dev=$(export_via_loop "$bs")
fio_write_verify "$dev" 16M
head -c 1M /dev/urandom > /tmp/rbdsd-pattern
dd if=/tmp/rbdsd-pattern of="$dev" bs=1M seek=40 oflag=direct conv=fsync status=none
expect_eq "$(image_md5 $name $((40 << 20)) $((1 << 20)))" "$(md5sum < /tmp/rbdsd-pattern)" \
	"the image's bytes on the host after the guest wrote them"
rm -f /tmp/rbdsd-pattern

# Served by the daemon systemd runs: its control socket lists the device,
# its journal has the device's lines, and it holds the image's lock.
wait_listed $name subtype rbd
# It holds the image's exclusive lock, and says so (the holder as the
# cluster names it, marked as this gateway).
wait_listed $name state owner
wait_listed $name lock_owner_is_us true
expect_match "$(host_ceph rbd lock ls "$TCMUD_CEPH_POOL/$name")" "$(listed $name lock_owner)" \
	"rbd lock ls names tcmudctl's lock owner"
wait_journal "rbd/$name: serving /dev/" 1
journalctl -b -u tcmud -o cat --no-pager > $STATE/rbd-journal
log "journal: $(grep -m1 "rbd/$name: serving rbd image" $STATE/rbd-journal)"
expect_eq "$(tcmud_pid)" "$pid" "tcmud's main PID while it serves $name"
expect_match "$(host_ceph rbd lock ls "$TCMUD_CEPH_POOL/$name")" "1 exclusive lock" \
	"the image's lock while tcmud serves it"
log "$dev: rbd image $name served by the systemd-managed tcmud $pid; the host reads what the guest wrote"
