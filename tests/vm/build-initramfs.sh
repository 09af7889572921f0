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
for ko in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay "${extra[@]}"; do
	if [ -f "$modules/kernel/$ko.ko" ]; then
		cp "$modules/kernel/$ko.ko" "$tmp/modules/"
	else
		xz -dc "$modules/kernel/$ko.ko.xz" > "$tmp/modules/$(basename "$ko").ko"
	fi
done
(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
