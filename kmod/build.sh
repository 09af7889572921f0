#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds uio.ko and target_core_user.ko out of tree for the pinned Debian
# kernel: extracts the few files we patch from Debian's linux-source tarball
# (cached), applies kmod/patches/*.patch, and runs kbuild against the matching
# linux-headers with W=1. Only our patches and this glue live in git.
#
#   kmod/build.sh [--stock] [--checkpatch] [--dkms-tree DIR] [--kernel debug] OUTDIR
#
#   --stock        build the unmodified sources (proves the glue; baseline)
#   --checkpatch   run the source's scripts/checkpatch.pl --strict on every
#                  patch first and fail on any message
#   --dkms-tree D  also write a self-contained DKMS source tree to D
#   --kernel K     stock (default); newest: the newest 6.12 upload
#                  (scripts/kernel.pin, its own linux-source and headers);
#                  debug: build against the lockdep/KASAN kernel's object
#                  tree (scripts/debug-kernel.sh) instead
#
# TCMUD_KMOD_PATCHES="patches/0001-... extra/0001-..." applies exactly
# those patches (relative to kmod/) instead of kmod/patches/*.patch: a
# prefix of the series (kmod/format-series.sh --check builds each one), or
# the series plus kmod/extra/ (the info_lock measurement, docs/kmod.md).
#
# Fails on any compiler warning, and if the CRCs of the uio exports differ
# from the stock kernel's Module.symvers (stock-built uio drivers would then
# refuse to load against our uio.ko).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

stock=0 checkpatch=0 dkms_tree='' out='' kernel=stock
while [ $# -gt 0 ]; do
	case $1 in
	--stock) stock=1 ;;
	--checkpatch) checkpatch=1 ;;
	--dkms-tree) dkms_tree=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	-*) echo "usage: $0 [--stock] [--checkpatch] [--dkms-tree DIR] [--kernel newest|debug] OUTDIR" >&2; exit 2 ;;
	*) out=$1 ;;
	esac
	shift
done
[ -n "$out" ] || { echo "usage: $0 [--stock] [--checkpatch] [--dkms-tree DIR] OUTDIR" >&2; exit 2; }

log() { echo "kmod: $*" >&2; }

case $kernel in
stock) eval "$("$top/scripts/kernel-cache.sh")" ;;
newest)
	# shellcheck source=../scripts/kernel.pin
	. "$top/scripts/kernel.pin"
	eval "$("$top/scripts/kernel-cache.sh" "$TCMUD_KERNEL_NEWEST_ABI" "$TCMUD_KERNEL_NEWEST_DEB_VERSION")"
	;;
debug) eval "$("$top/scripts/debug-kernel.sh")" ;;
*) echo "kmod: --kernel is stock, newest or debug" >&2; exit 2 ;;
esac
: "${TCMUD_KERNEL_HEADERS:?}" "${TCMUD_KERNEL_SOURCE_TARBALL:?}" "${TCMUD_KERNEL_ABI:?}"

cache=${TCMUD_CACHE:-/var/cache/tcmud}/kmod
# Bump the suffix when the member list changes.
src=$cache/src-$TCMUD_KERNEL_ABI-v2
members=(
	drivers/uio/uio.c
	include/linux/uio_driver.h
	drivers/target/target_core_user.c
	include/uapi/linux/target_core_user.h
	MAINTAINERS
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
)

# xz has to decompress the whole stream to find five files: do it once.
extract_sources() {
	local top_dir tmp
	top_dir=$(basename "$TCMUD_KERNEL_SOURCE_TARBALL" .tar.xz)
	tmp=$src.tmp
	# Older extractions of this kernel (other member lists) go first.
	rm -rf "$cache"/src-"$TCMUD_KERNEL_ABI"*
	mkdir -p "$tmp"
	log "extracting ${#members[@]} files from $(basename "$TCMUD_KERNEL_SOURCE_TARBALL") (about 20 s)"
	tar -xJf "$TCMUD_KERNEL_SOURCE_TARBALL" -C "$tmp" --strip-components=1 \
		"${members[@]/#/$top_dir/}"
	touch "$tmp/stamp"
	rm -rf "$src"
	mv "$tmp" "$src"
}

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
[ -f "$src/stamp" ] || extract_sources

patches=()
if [ "$stock" = 0 ] && [ -n "${TCMUD_KMOD_PATCHES:-}" ]; then
	# An explicit list (a prefix of the series, or the series plus
	# kmod/extra/): paths relative to kmod/ or absolute.
	for p in $TCMUD_KMOD_PATCHES; do
		case $p in /*) ;; *) p=$here/$p ;; esac
		[ -f "$p" ] || { log "no patch $p"; exit 2; }
		patches+=("$p")
	done
elif [ "$stock" = 0 ]; then
	shopt -s nullglob
	patches=("$here"/patches/*.patch)
	shopt -u nullglob
fi

if [ "$checkpatch" = 1 ]; then
	for p in "${patches[@]}"; do
		log "checkpatch --strict $(basename "$p")"
		# --no-tree: only the scripts' data files are extracted, not a tree.
		"$src/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types --max-line-length=80 "$p" ||
			{ log "checkpatch failed on $p"; exit 1; }
	done
fi

# The patched tree, kernel layout, so `patch -p1` takes the patches as sent.
flavour=$([ "$stock" = 1 ] && echo stock || echo patched)
work=$cache/build-$TCMUD_KERNEL_ABI-$flavour
rm -rf "$work"
mkdir -p "$work/tree" "$work/m/include/linux" "$work/m/include/uapi/linux"
for f in drivers/uio/uio.c include/linux/uio_driver.h MAINTAINERS \
	 drivers/target/target_core_user.c include/uapi/linux/target_core_user.h; do
	mkdir -p "$work/tree/$(dirname "$f")"
	cp "$src/$f" "$work/tree/$f"
done
for p in "${patches[@]}"; do
	log "applying $(basename "$p")"
	patch -d "$work/tree" -p1 -s --fuzz=0 --no-backup-if-mismatch < "$p"
done

# The user-space copy of the multi-queue ABI must be what the patches add
# (TCMUD_KMOD_PREFIX=1: a shorter prefix of the series, with an older
# header; kmod/format-series.sh --check builds those).
mq=include/uapi/linux/target_core_user_mq.h
if [ "${TCMUD_KMOD_PREFIX:-0}" = 0 ] && [ -f "$work/tree/$mq" ] &&
	! cmp -s "$work/tree/$mq" "$here/$mq"; then
	log "kmod/$mq differs from the header the patches add; refresh it"
	exit 1
fi

# kbuild wants a flat module directory: sources at the top, headers below.
cp "$work/tree/drivers/uio/uio.c" "$work/tree/drivers/target/target_core_user.c" "$work/m/"
cp "$work/tree/include/linux/"*.h "$work/m/include/linux/"
cp "$work/tree/include/uapi/linux/"*.h "$work/m/include/uapi/linux/"
cp "$here/Kbuild" "$work/m/Kbuild"

kbuild_args=(W=1)
# Module BTF needs pahole (package dwarves); without it, build without BTF.
command -v pahole > /dev/null || { log "no pahole: modules without BTF"; kbuild_args+=(CONFIG_DEBUG_INFO_BTF_MODULES=); }
# sparse (C=2) when present: its findings count as warnings too.
[ "${TCMUD_KMOD_SPARSE:-1}" = 1 ] && command -v sparse > /dev/null && kbuild_args+=(C=2)
log "building $flavour modules against $TCMUD_KERNEL_ABI (${kbuild_args[*]})"
make -C "$TCMUD_KERNEL_HEADERS" M="$work/m" "${kbuild_args[@]}" -j2 modules > "$work/make.log" 2>&1 ||
	{ cat "$work/make.log" >&2; log "build failed"; exit 1; }
# gcc's warnings name their -W option; sparse's do not. Stock uio.c has one
# sparse finding (uio_poll returns -EIO as a __poll_t), listed in
# sparse-known.txt without line numbers; any other finding fails the build.
if grep -E '(warning|error):.*\[-W' "$work/make.log" >&2 || grep -q ' error:' "$work/make.log"; then
	log "the build is not W=1 clean (log: $work/make.log)"
	exit 1
fi
if grep -E ': (warning|error):' "$work/make.log" | grep -v '\[-W' |
	sed -E 's|^.*/([^/:]+):[0-9]+:[0-9]+: |\1: |' | grep -vxFf "$here/sparse-known.txt" >&2; then
	log "new sparse findings (log: $work/make.log)"
	exit 1
fi

# Same CRCs as the stock kernel's uio exports, or stock-built uio drivers
# (uio_pdrv_genirq, uio_pci_generic, ...) would not load against our uio.ko.
if ! awk 'NR == FNR { stock[$2] = $1; next }
	 $3 ~ /(^|\/)uio$/ && ($2 in stock) && stock[$2] != $1 { print "kmod: CRC of " $2 " changed"; bad = 1 }
	 END { exit bad }' "$TCMUD_KERNEL_HEADERS/Module.symvers" "$work/m/Module.symvers" >&2; then
	log "stock uio drivers would not load against this uio.ko"
	exit 1
fi

mkdir -p "$out"
cp "$work/m/uio.ko" "$work/m/target_core_user.ko" "$out/"
log "wrote $out/uio.ko $out/target_core_user.ko"

if [ -n "$dkms_tree" ]; then
	# Our files only: dkms-prepare.sh takes the kernel's own files from the
	# linux-source tarball at DKMS build time.
	mkdir -p "$dkms_tree/patches"
	cp "$here/Kbuild" "$here/dkms.conf" "$here/dkms-prepare.sh" "$here/tar-members.py" "$dkms_tree/"
	[ ${#patches[@]} -eq 0 ] || cp "${patches[@]}" "$dkms_tree/patches/"
	log "wrote the DKMS source tree $dkms_tree"
fi
