#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Downloads (apt-get download — nothing is installed on the host) and unpacks
# the pinned Debian kernel image, headers, kbuild and source into one cache
# root, then prints what it made as shell assignments:
#
#   eval "$(scripts/kernel-cache.sh)"
#
# A second run only checks a stamp file. The cache lives under $TCMUD_CACHE
# (default /var/cache/tcmud) so fresh clones and CI runs share it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernel.pin
. "$here/kernel.pin"
# Another upload than the pinned one (the newest 6.12, for the DKMS check):
#   scripts/kernel-cache.sh ABI DEB_VERSION
abi=${1:-$TCMUD_KERNEL_ABI}
ver=${2:-$TCMUD_KERNEL_DEB_VERSION}
base=${abi%-amd64}                 # 6.12.117+deb12
series=$(echo "$abi" | cut -d. -f1,2)  # 6.12
cache=${TCMUD_CACHE:-/var/cache/tcmud}
dir=$cache/kernel/$abi
root=$dir/root

log() { echo "kernel-cache: $*" >&2; }

fetch_and_unpack() {
	# The 6.12 backport uploads have a kbuild per ABI; Debian 12's own 6.1
	# one per series (linux-kbuild-6.1).
	local kbuild=linux-kbuild-$base
	case $base in
	*+*) ;;
	*) kbuild=linux-kbuild-$series ;;
	esac
	local pkgs=(
		"linux-image-$abi-unsigned=$ver"
		"linux-headers-$abi=$ver"
		"linux-headers-$base-common=$ver"
		"$kbuild=$ver"
		"linux-source-$series=$ver"
	)
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp/debs" "$dir.tmp/root"
	log "downloading ${pkgs[*]}"
	if ! (cd "$dir.tmp/debs" && apt-get download -q "${pkgs[@]}" >&2) &&
	   ! { log "refreshing package lists and retrying"; apt-get update -qq >&2 &&
	       (cd "$dir.tmp/debs" && apt-get download -q "${pkgs[@]}" >&2); }; then
		log "apt-get download failed; 'apt-get update' may be needed, or the pinned"
		log "version $ver is gone from the mirror: bump scripts/kernel.pin"
		return 1
	fi
	for deb in "$dir.tmp"/debs/*.deb; do
		log "unpacking $(basename "$deb")"
		dpkg -x "$deb" "$dir.tmp/root"
	done
	# The headers' top Makefile includes the common tree by absolute path.
	sed -i "s|/usr/src/linux-headers-$base-common|$dir/root/usr/src/linux-headers-$base-common|" \
		"$dir.tmp/root/usr/src/linux-headers-$abi/Makefile"
	log "depmod"
	depmod -b "$dir.tmp/root" "$abi"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	# mv changed the path the Makefile points at.
	sed -i "s|$dir.tmp/root|$dir/root|" "$root/usr/src/linux-headers-$abi/Makefile"
	rm -rf "$dir/debs"
	touch "$dir/stamp"
}

mkdir -p "$cache/kernel"
exec 9>"$cache/kernel/.lock"
flock 9
[ -f "$dir/stamp" ] || fetch_and_unpack

cat <<OUT
TCMUD_KERNEL_ABI=$abi
TCMUD_KERNEL_IMAGE=$root/boot/vmlinuz-$abi
TCMUD_KERNEL_ROOT=$root
TCMUD_KERNEL_MODULES=$root/lib/modules/$abi
TCMUD_KERNEL_HEADERS=$root/usr/src/linux-headers-$abi
TCMUD_KERNEL_SOURCE_TARBALL=$root/usr/src/linux-source-$series.tar.xz
OUT
