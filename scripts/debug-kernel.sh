#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds (once) the test bed's debug kernel from the pinned Debian
# linux-source: tinyconfig + tests/vm/debug-kernel.config (lockdep, KASAN,
# might_sleep, list/object debugging, UBSAN, and only what the guest loads),
# then prints what it made as shell assignments, the same names
# scripts/kernel-cache.sh prints for the stock kernel:
#
#   eval "$(scripts/debug-kernel.sh)"            build if needed (~30-60 min
#                                                 on 2 busy cores)
#   eval "$(scripts/debug-kernel.sh --cached)"   exit 1 at once if not built
#
# The cache is keyed by the Debian source version and a hash of the config
# fragment and of this recipe, under $TCMUD_CACHE (default /var/cache/tcmud).
# A build that was interrupted resumes (make is incremental); only a finished
# one gets its stamp. The object tree stays: kmod/build.sh builds the patched
# modules against it (TCMUD_KERNEL_HEADERS), so their vermagic matches.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
cached_only=0
case ${1:-} in
--cached) cached_only=1 ;;
"") ;;
*) echo "usage: $0 [--cached]" >&2; exit 2 ;;
esac

log() { echo "debug-kernel: $*" >&2; }

# shellcheck source=kernel.pin
. "$here/kernel.pin"
fragment=$top/tests/vm/debug-kernel.config
# Bump when the steps below change what gets built.
recipe=1
# Only the fragment's settings make the key: a comment edit (an SPDX line,
# say) must not throw away a kernel that takes over an hour to build.
key=$( { echo "$TCMUD_KERNEL_DEB_VERSION recipe $recipe"
	grep -E '^(CONFIG_|# CONFIG_.* is not set)' "$fragment"; } | sha256sum | cut -c1-12)
cache=${TCMUD_CACHE:-/var/cache/tcmud}
dir=$cache/kernel/debug-$TCMUD_KERNEL_DEB_VERSION-$key
localversion=-tcmud-debug
release=$(echo "$TCMUD_KERNEL_DEB_VERSION" | cut -d- -f1)$localversion
src=$dir/src obj=$dir/obj root=$dir/root

print_vars() {
	cat <<OUT
TCMUD_KERNEL_ABI=$release
TCMUD_KERNEL_IMAGE=$root/boot/vmlinuz-$release
TCMUD_KERNEL_ROOT=$root
TCMUD_KERNEL_MODULES=$root/lib/modules/$release
TCMUD_KERNEL_HEADERS=$obj
TCMUD_KERNEL_SOURCE_TARBALL=$TCMUD_KERNEL_SOURCE_TARBALL
TCMUD_KERNEL_FLAVOUR=debug
OUT
}

# Every line of the fragment must hold in the final .config: olddefconfig
# silently drops what a missing dependency forbids.
check_config() {
	local line name want bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) name=${line%%=*} want=$line ;;
		"# CONFIG_"*" is not set") name=${line#\# }; name=${name%% *} want="" ;;
		*) continue ;;
		esac
		if [ -n "$want" ]; then
			grep -qxF "$want" "$obj/.config" || { log "config: wanted $want, got $(grep -E "^(# )?${name}[= ]" "$obj/.config" || echo nothing)"; bad=1; }
		elif grep -qE "^$name=" "$obj/.config"; then
			log "config: wanted $name off, got $(grep -E "^$name=" "$obj/.config")"; bad=1
		fi
	done < "$fragment"
	return $bad
}

build() {
	local t0 t1 jobs=${TCMUD_KERNEL_JOBS:-$(nproc)}
	t0=$(date +%s)
	mkdir -p "$dir"
	if [ ! -f "$src/.extracted" ]; then
		rm -rf "$src"
		mkdir -p "$src"
		log "extracting $(basename "$TCMUD_KERNEL_SOURCE_TARBALL") (about 20 s)"
		tar -xJf "$TCMUD_KERNEL_SOURCE_TARBALL" -C "$src" --strip-components=1
		touch "$src/.extracted"
	fi
	mkdir -p "$obj"
	log "configuring: tinyconfig + $(basename "$fragment")"
	make -s -C "$src" O="$obj" tinyconfig >&2
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$fragment" > "$obj/merge.log" 2>&1
	"$src/scripts/config" --file "$obj/.config" --set-str LOCALVERSION "$localversion" --disable LOCALVERSION_AUTO
	make -s -C "$src" O="$obj" olddefconfig >&2
	check_config || { log "config check failed (see above)"; return 1; }
	log "building $release with -j$jobs at nice 19; log: $obj/build.log"
	if ! nice -n 19 make -C "$src" O="$obj" -j"$jobs" bzImage modules > "$obj/build.log" 2>&1; then
		tail -n 30 "$obj/build.log" >&2
		log "build failed"
		return 1
	fi
	rm -rf "$root"
	mkdir -p "$root/boot"
	cp "$obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$release"
	cp "$obj/.config" "$root/boot/config-$release"
	cp "$obj/System.map" "$root/boot/System.map-$release"
	make -s -C "$src" O="$obj" INSTALL_MOD_PATH="$root" modules_install >&2
	# The guest binds root/lib/modules over /lib/modules: build/source links
	# would point outside it and mean nothing there.
	rm -f "$root/lib/modules/$release/build" "$root/lib/modules/$release/source"
	depmod -b "$root" "$release"
	t1=$(date +%s)
	echo "$(( t1 - t0 )) s wall, $(nproc) cores, jobs $jobs, $(date -u +%FT%TZ)" > "$dir/build-time"
	log "built in $(( t1 - t0 )) s"
	touch "$dir/stamp"
}

if [ ! -f "$dir/stamp" ] && [ "$cached_only" = 1 ]; then
	log "no cached debug kernel at $dir"
	exit 1
fi
eval "$("$here/kernel-cache.sh")"   # the source tarball
if [ ! -f "$dir/stamp" ]; then
	mkdir -p "$cache/kernel"
	exec 8>"$cache/kernel/.debug-lock"
	flock 8
	[ -f "$dir/stamp" ] || build
fi
print_vars
