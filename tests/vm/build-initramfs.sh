#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the stage-1 initramfs (busybox-static + the 9p/overlay modules of
# the kernel whose modules are in MODULES) into $1. busybox insmod cannot
# read .ko.xz, so Debian's are decompressed here; the debug kernel's
# (scripts/debug-kernel.sh) are plain .ko. With INIT (the systemd guest's stage 1),
# that script is the init and the persistent disk's modules (virtio_blk,
# ext4) are added.
#   build-initramfs.sh OUT MODULES [INIT]
set -euo pipefail
out=$1 modules=$2
here=$(cd "$(dirname "$0")" && pwd)
init=${3:-$here/initramfs-init}
extra=()
[ $# -lt 3 ] || extra=(drivers/block/virtio_blk lib/crc16 fs/mbcache fs/jbd2/jbd2
	crypto/crc32c_generic fs/ext4/ext4)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,modules}
cp /bin/busybox "$tmp/bin/busybox"
cp "$init" "$tmp/init"
chmod +x "$tmp/init"
# What stage 1 needs, as modules.dep resolves it (dependencies first), so
# the same list serves every kernel: 6.12 builds virtio and fscache in,
# Debian 12's 6.1 has them as modules. virtio_pci is no dependency of
# 9pnet_virtio but the bus its device sits on; a module the kernel has built
# in is simply not in modules.dep.
want=(fs/9p/9p net/9p/9pnet_virtio drivers/virtio/virtio_pci fs/overlayfs/overlay "${extra[@]}")
order=()
# add REL: REL's dependencies, then REL, each once.
add() {
	local rel=$1 dep deps
	[[ " ${order[*]} " == *" $rel "* ]] && return 0
	read -ra deps <<< "$(awk -F': *' -v m="$rel" '$1 == m { print $2 }' "$modules/modules.dep")"
	for dep in "${deps[@]}"; do
		add "$dep"
	done
	order+=("$rel")
}
for w in "${want[@]}"; do
	rel=$(grep -oE "^kernel/$w\.ko(\.xz)?:" "$modules/modules.dep" | tr -d :) || continue
	add "$rel"
done
for rel in "${order[@]}"; do
	name=$(basename "${rel%.xz}" .ko)
	case $rel in
	*.xz) xz -dc "$modules/$rel" > "$tmp/modules/$name.ko" ;;
	*) cp "$modules/$rel" "$tmp/modules/$name.ko" ;;
	esac
	echo "$name" >> "$tmp/modules/order"
done
(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
