#!/usr/bin/env bash
# Builds the stage-1 initramfs (busybox-static + the 9p/overlay modules of
# the pinned kernel) into $1. busybox insmod cannot read .ko.xz, so the
# modules are decompressed here.
set -euo pipefail
out=$1 modules=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,modules}
cp /bin/busybox "$tmp/bin/busybox"
cp "$here/initramfs-init" "$tmp/init"
chmod +x "$tmp/init"
for ko in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay; do
	xz -dc "$modules/kernel/$ko.ko.xz" > "$tmp/modules/$(basename "$ko").ko"
done
(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
