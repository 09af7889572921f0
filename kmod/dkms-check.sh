#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Checks the tcmud-dkms package with Debian's dkms the way a machine runs
# it, in seconds on the host instead of the systemd guest's 20 minutes of
# emulated DKMS build: `apt install ./tcmud-dkms_*.deb` in a throwaway
# overlay of the host's root (private mount namespace; the host's files and
# its dpkg database are not touched), whose /lib/modules is the pinned
# kernel's module tree with its headers in /usr/src, as in the guest. The
# package's own maintainer scripts run dkms add, build and install. Then:
#   - `dkms status` is exactly "installed", with no warning; the installed
#     files are the built ones and carry the pinned kernel's vermagic;
#   - modprobe resolves uio, target_core_user and a stock uio driver's
#     (uio_pci_generic) uio to updates/dkms;
#   - dkms refuses to build for any other kernel (BUILD_EXCLUSIVE_KERNEL);
#   - apt remove: dkms status empty, modules gone, modprobe back on the
#     stock ones; apt purge: nothing of the package left.
# The installed modules are left in OUTDIR for a VM run:
#   tests/vm/run --kmod OUTDIR kmod-uio-generic kmod-mq-fio
# Loading them and serving I/O is tests/vm/scenarios/systemd-tcmud-dkms.
#
#   kmod/dkms-check.sh [--newest] DEBDIR [OUTDIR]   (as root; DEBDIR from
#                                                 scripts/build-debs.sh)
# --newest: against the newest 6.12 upload (kernel.pin's
# TCMUD_KERNEL_NEWEST_*) instead of the pinned one, with that upload's
# linux-source-6.12 tarball in the overlay's /usr/src, as after a kernel
# update.
#
# Exits 77 where it cannot run (not root, no dkms, no mount namespace).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
newest=0
if [ "${1:-}" = --newest ]; then
	newest=1
	shift
fi
debs=$(realpath "${1:?usage: $0 DEBDIR [OUTDIR]}")
out=${2:+$(realpath -m "$2")}
log() { echo "dkms-check: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
skip() { log "SKIP: $*"; exit 77; }

deb=$(ls "$debs"/tcmud-dkms_*_all.deb 2> /dev/null) || fail "no $debs/tcmud-dkms_*_all.deb (scripts/build-debs.sh)"
[ "$(id -u)" = 0 ] || skip "needs root (mount namespace, overlay)"
command -v dkms > /dev/null || skip "no dkms (scripts/install-deps.sh)"
if [ -z "${TCMUD_DKMS_CHECK_NS:-}" ]; then
	# Every mount below dies with this namespace.
	again=()
	[ $newest = 0 ] || again=(--newest)
	TCMUD_DKMS_CHECK_NS=1 exec unshare -m --propagation private "$0" "${again[@]}" "$@" ||
		skip "no private mount namespace here"
fi
if [ $newest = 1 ]; then
	# shellcheck source=../scripts/kernel.pin
	. "$top/scripts/kernel.pin"
	eval "$("$top/scripts/kernel-cache.sh" "$TCMUD_KERNEL_NEWEST_ABI" \
		"$TCMUD_KERNEL_NEWEST_DEB_VERSION")"
else
	eval "$("$top/scripts/kernel-cache.sh")"
fi
: "${TCMUD_KERNEL_ROOT:?}" "${TCMUD_KERNEL_ABI:?}"
kver=$TCMUD_KERNEL_ABI

# The overlay's upper layer is a tmpfs mounted on $scratch: unmounting it
# takes everything, and $scratch itself is only ever rmdir'ed (never rm -r:
# the overlay's lower layer is /).
scratch=$(mktemp -d /tmp/tcmud-dkms-check.XXXXXX)
trap 'umount -R "$scratch" 2> /dev/null; rmdir "$scratch"' EXIT
mount -t tmpfs -o size=2g tmpfs "$scratch"
mkdir "$scratch/upper" "$scratch/work" "$scratch/root"
root=$scratch/root
mount -t overlay overlay -o "lowerdir=/,upperdir=$scratch/upper,workdir=$scratch/work" "$root" ||
	skip "cannot mount an overlay of / here"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mkdir -p "$root/lib/modules"
# Through the overlay: what dkms writes there (updates/dkms, depmod's
# files) lands in the upper layer, never in the kernel cache.
mount --bind "$root$TCMUD_KERNEL_ROOT/lib/modules" "$root/lib/modules"
cp "$deb" "$root/tmp/"

start=$(date +%s)
rc=0
chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
	KVER="$kver" KROOT="$TCMUD_KERNEL_ROOT" DEB="/tmp/$(basename "$deb")" \
	bash -euo pipefail -s < "$here/dkms-check-inside.sh" || rc=$?
[ $rc = 0 ] || fail "in the overlay (exit $rc)"
if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "$scratch/upper/tmp/dkms-check-ko/"* "$out/"
	log "DKMS-installed modules in $out"
fi
log "passed in $(( $(date +%s) - start )) s"
