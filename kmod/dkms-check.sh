#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Checks that kmod/dkms.conf works with Debian's dkms, without touching the
# host's DKMS state or /lib/modules: makes the DKMS source tree with
# build.sh, then `dkms add`, `dkms build` against the pinned kernel's cached
# headers and `dkms install` into a copy of the pinned kernel's module tree,
# all under a scratch directory; then checks that
#   - the built modules carry the pinned kernel's vermagic,
#   - after depmod, modprobe resolves uio and target_core_user to
#     updates/dkms (what a real install makes modprobe load), and stock uio
#     drivers (uio_pci_generic) to our uio.ko,
#   - dkms refuses to build for any other kernel (BUILD_EXCLUSIVE_KERNEL).
# The installed modules are left in OUTDIR for a VM run:
#   tests/vm/run --kmod OUTDIR kmod-uio-generic kmod-mq-fio
#
#   kmod/dkms-check.sh OUTDIR          (as root; needs the dkms package)
#
# dkms 3.0 reads install_tree only from /etc/dkms/framework.conf.d, so a
# one-line file there points it at the scratch copy for the install step
# and is removed again on exit.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out=${1:?usage: $0 OUTDIR}
log() { echo "dkms-check: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
command -v dkms > /dev/null || fail "no dkms (apt-get install --no-install-recommends dkms)"

eval "$("$top/scripts/kernel-cache.sh")"
: "${TCMUD_KERNEL_HEADERS:?}" "${TCMUD_KERNEL_ABI:?}" "${TCMUD_KERNEL_MODULES:?}"
kver=$TCMUD_KERNEL_ABI
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$here/dkms.conf")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$here/dkms.conf")

scratch=$(mktemp -d /tmp/tcmud-dkms.XXXXXX)
conf=/etc/dkms/framework.conf.d/zz-tcmud-dkms-check-$$.conf
trap 'rm -f "$conf"; rm -rf "$scratch"' EXIT
src=$scratch/src dkms_tree=$scratch/dkms root=$scratch/root
mkdir -p "$src" "$dkms_tree" "$root/lib/modules"
dk=(--sourcetree "$src" --dkmstree "$dkms_tree")

"$here/build.sh" --dkms-tree "$src/$name-$version" "$scratch/ko"
# dkms-prepare.sh reads the kernel's files from the cached linux-source.
export TCMUD_LINUX_SOURCE=$TCMUD_KERNEL_SOURCE_TARBALL
if find "$src/$name-$version" -name '*.c' | grep -q .; then
	fail "the DKMS source ships kernel files: $(find "$src/$name-$version" -name '*.c')"
fi
log "dkms add / build $name/$version for $kver"
dkms add -m "$name" -v "$version" "${dk[@]}"
dkms build -m "$name" -v "$version" -k "$kver" --kernelsourcedir "$TCMUD_KERNEL_HEADERS" "${dk[@]}" ||
	{ cat "$dkms_tree/$name/$version/build/make.log" >&2 2>/dev/null; fail "dkms build"; }

# A copy of the pinned kernel's modules stands in for /lib/modules/$kver.
cp -a "$TCMUD_KERNEL_MODULES" "$root/lib/modules/$kver"
mkdir -p /etc/dkms/framework.conf.d
printf 'install_tree="%s"\n' "$root/lib/modules" > "$conf"
# dkms's own depmod would look at the host's /lib/modules/$kver.
dkms install --no-depmod -m "$name" -v "$version" -k "$kver" \
	--kernelsourcedir "$TCMUD_KERNEL_HEADERS" "${dk[@]}"
rm -f "$conf"
depmod -b "$root" "$kver"

installed=$root/lib/modules/$kver/updates/dkms
for m in uio target_core_user; do
	[ -f "$installed/$m.ko" ] || fail "dkms install left no updates/dkms/$m.ko"
	magic=$(modinfo -F vermagic "$installed/$m.ko")
	[ "${magic%% *}" = "$kver" ] || fail "$m.ko vermagic '$magic' is not $kver"
	modprobe -d "$root" -S "$kver" --show-depends "$m" | grep -q "updates/dkms/$m.ko" ||
		fail "modprobe would not load updates/dkms/$m.ko for $m"
done
modprobe -d "$root" -S "$kver" --show-depends uio_pci_generic | grep -q 'updates/dkms/uio.ko' ||
	fail "a stock uio driver would not get our uio.ko"
log "installed to updates/dkms; modprobe resolves uio, target_core_user and uio_pci_generic's uio there"

if dkms build -m "$name" -v "$version" -k 6.1.0-0-amd64 --kernelsourcedir "$TCMUD_KERNEL_HEADERS" \
	"${dk[@]}" > "$scratch/other.log" 2>&1; then
	fail "dkms built for 6.1.0-0-amd64 despite BUILD_EXCLUSIVE_KERNEL"
fi
log "refused another kernel: $(grep -m1 -i 'exclusive\|not supported\|excluded' "$scratch/other.log" || tail -n1 "$scratch/other.log")"

mkdir -p "$out"
cp "$installed/uio.ko" "$installed/target_core_user.ko" "$out/"
log "passed; DKMS-installed modules in $out"
