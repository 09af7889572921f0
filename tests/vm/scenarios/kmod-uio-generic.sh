# SPDX-License-Identifier: GPL-2.0-or-later
# A uio driver that does not opt in to the patched uio core keeps today's
# behaviour exactly: Debian's stock uio_pci_generic.ko (built against the
# stock headers, unmodified) bound to QEMU's edu PCI device (tests/vm/run
# adds one) is driven by tests/uio-compat/uio-generic-check — map0 mmap,
# EINVAL on wrong sizes, EAGAIN, poll, ENOSYS irqcontrol, a blocking read
# woken by an interrupt raised through BAR0, event counts, and a reader
# blocked in read() while the device is unbound getting EIO — first on
# Debian's uio.ko, then, in the same boot, on ours (--kmod). Each run must
# see the values uio.c documents, and the two outputs must be identical.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
CHECK=$TCMUD_BUILD/tests/uio-compat/uio-generic-check
[ -x "$CHECK" ] || fail "no $CHECK: build tests/uio-compat (meson) first"
OUT=${TCMUD_VM_OUT:-/tmp}
kmod=$TCMUD_KMOD

edu=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x11e8 ] && edu=$(basename "$d")
done
[ -n "$edu" ] || fail "no edu PCI device (1234:11e8) in the guest"
log "edu at $edu"

build_id() { od -An -tx1 "/sys/module/$1/notes/.note.gnu.build-id" | tr -d ' \n' | tail -c 40; }
ko_build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }

# An earlier scenario of this boot may have our uio.ko in use by TCMU.
unload_uio() {
	if lsmod | grep -q '^target_core_user '; then
		remove_all_targets
		rmdir "$TARGET"/core/user_* 2>/dev/null || true
		rmmod target_core_user
	fi
	! lsmod | grep -q '^uio_pci_generic ' || rmmod uio_pci_generic
	! lsmod | grep -q '^uio ' || rmmod uio
}

# run_half LABEL: binds uio_pci_generic (stock, from /lib/modules) to edu
# and runs the checks; the run ends with the device unbound.
run_half() {
	local label=$1 rc=0
	modprobe uio_pci_generic
	echo "1234 11e8" > /sys/bus/pci/drivers/uio_pci_generic/new_id
	for _ in $(seq 50); do [ -d "/sys/bus/pci/devices/$edu/uio" ] && break; sleep 0.1; done
	[ -d "/sys/bus/pci/devices/$edu/uio" ] || fail "$label: uio_pci_generic did not bind $edu"
	"$CHECK" "$edu" > "$OUT/uio-generic-$label.txt" || rc=$?
	sed "s/^/  $label: /" "$OUT/uio-generic-$label.txt"
	expect_eq "$rc" 0 "$label: uio-generic-check exit status"
	[ ! -d "/sys/bus/pci/devices/$edu/uio" ] || fail "$label: $edu still bound after the check"
	rmmod uio_pci_generic
}

unload_uio
modprobe uio
[ "$(build_id uio)" != "$(ko_build_id "$kmod/uio.ko")" ] || fail "stock half: uio is ours, not Debian's"
log "stock uio.ko live ($(build_id uio))"
run_half stock
rmmod uio

insmod "$kmod/uio.ko"
expect_eq "$(build_id uio)" "$(ko_build_id "$kmod/uio.ko")" "uio build-id (live vs --kmod)"
log "patched uio.ko live"
run_half patched

diff -u "$OUT/uio-generic-stock.txt" "$OUT/uio-generic-patched.txt" ||
	fail "uio_pci_generic behaves differently on the patched uio.ko"
log "kmod-uio-generic passed: $(wc -l < "$OUT/uio-generic-stock.txt") identical observations"
