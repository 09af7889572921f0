#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the self-contained benchmark bundle that scripts/device-bench.sh
# boots on a machine with many cores but no QEMU, no packages and no
# network (the lent "device" machine): one tar.xz holding
#   host/   Debian 12's qemu-system-x86_64, every library it loads (Debian's
#           own ld-linux-x86-64.so.2 and libc included, run as
#           "host/lib/ld-linux-x86-64.so.2 --library-path host/lib ..." so
#           the machine's own glibc does not matter), its TCG accel module
#           and the firmware a -kernel boot reads (-L host/share)
#   guest/  the pinned Debian kernel (scripts/kernel-cache.sh) and an
#           uncompressed initramfs that is the guest's whole root:
#           busybox-static, scripts/device-bench-init.sh as /init, fio,
#           tcmud, mkfs.xfs, their libraries, the stock modules the target
#           stack needs (decompressed) and kmod/'s uio.ko + target_core_user.ko
#   BUILD   what went in (commit, kmod patches, versions)
#
#   scripts/device-bench-bundle.sh [--tcmud BIN] [--fio BIN] [--kmod DIR]
#                                  [--work DIR] [OUT]
#
# OUT defaults to .devbench/bundle.tar.xz (ignore .devbench/ in
# .git/info/exclude; it is carried, not committed). Without --tcmud, a lean
# tcmud (no tests, no rbd) is built from `git archive HEAD` in WORK/tcmud;
# without --fio, fio is built from Debian's own source package (rbd,
# gluster, rdma, pmem ... disabled: Debian's binary pulls 80 MB of
# libraries) in WORK/fio; without --kmod, kmod/build.sh builds the series
# at HEAD into WORK/kmod. WORK defaults to /var/tmp/tcmud-devbench.
# Needs (Debian 12): qemu-system-x86, busybox-static, xfsprogs, meson and
# the build dependencies of tcmud and fio (libaio-dev: fetched if missing).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tcmud="" fio="" kmod="" work=/var/tmp/tcmud-devbench out=""
tcmud_from=given fio_from=given kmod_from=given
while [ $# -gt 0 ]; do
	case $1 in
	--tcmud) tcmud=$(realpath "$2"); shift 2 ;;
	--fio) fio=$(realpath "$2"); shift 2 ;;
	--kmod) kmod=$(realpath "$2"); shift 2 ;;
	--work) work=$2; shift 2 ;;
	-h|--help) sed -n '3,29p' "$0"; exit 0 ;;
	-*) echo "device-bench-bundle: unknown option $1" >&2; exit 2 ;;
	*) out=$1; shift ;;
	esac
done
out=${out:-$src/.devbench/bundle.tar.xz}
log() { echo "device-bench-bundle: $*" >&2; }
mkdir -p "$work"
work=$(realpath "$work")
head=$(git -C "$src" rev-parse HEAD)

if [ -z "$kmod" ]; then
	kmod=$work/kmod kmod_from=HEAD
	log "kmod/build.sh at HEAD ($head) into $kmod"
	rm -rf "$work/kmod-src" && mkdir -p "$work/kmod-src"
	git -C "$src" archive HEAD | tar -x -C "$work/kmod-src"
	"$work/kmod-src/kmod/build.sh" "$kmod" >&2
fi
if [ -z "$tcmud" ]; then
	log "lean tcmud from HEAD ($head) in $work/tcmud"
	rm -rf "$work/tcmud" && mkdir -p "$work/tcmud/src"
	git -C "$src" archive HEAD | tar -x -C "$work/tcmud/src"
	(cd "$work/tcmud/src" && meson setup "$work/tcmud/build" -Dtests=false -Dvm_tests=false \
		-Drbd=disabled >&2 && ninja -C "$work/tcmud/build" daemon/core/tcmud >&2)
	tcmud=$work/tcmud/build/daemon/core/tcmud tcmud_from=HEAD
fi
if [ -z "$fio" ]; then
	ver=$(dpkg-query -W -f='${Version}' fio 2>/dev/null || echo 3.33-3)
	f=$work/fio
	log "fio $ver from Debian's source in $f"
	rm -rf "$f" && mkdir -p "$f/apt/sources.d" "$f/apt/lists/partial" "$f/src" "$f/aio"
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	cat > "$f/apt/sources.d/src.sources" <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
	apto=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$f/apt/sources.d"
		-o Dir::State::lists="$f/apt/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
	apt-get "${apto[@]}" -q update >&2
	(cd "$f/src" && apt-get "${apto[@]}" -o APT::Sandbox::User=root -q source --download-only "fio=$ver" >&2 &&
		dpkg-source -x fio_*.dsc fio >/dev/null)
	aio=()
	if [ ! -f /usr/include/libaio.h ]; then
		(cd "$f" && apt-get -o APT::Sandbox::User=root -q download libaio-dev >&2 && dpkg -x libaio-dev_*.deb aio)
		aio=(--extra-cflags="-I$f/aio/usr/include -L$f/aio/usr/lib/x86_64-linux-gnu")
	fi
	(cd "$f/src/fio" && ./configure --disable-native --disable-numa --disable-rdma --disable-rados \
		--disable-rbd --disable-http --disable-gfapi --disable-pmem --disable-libnfs --disable-xnvme \
		--disable-libzbc --disable-tcmalloc --disable-dfs --disable-lex "${aio[@]}" >&2 &&
		make -j"$(nproc)" fio LDFLAGS="-L$f/aio/usr/lib/x86_64-linux-gnu" >&2)
	fio=$f/src/fio/fio fio_from="Debian source $ver"
fi
for f in "$tcmud" "$fio" "$kmod/uio.ko" "$kmod/target_core_user.ko" /bin/busybox \
	/usr/bin/qemu-system-x86_64 /usr/sbin/mkfs.xfs; do
	[ -f "$f" ] || { log "missing $f"; exit 1; }
done
"$fio" --enghelp | grep -qx '[[:space:]]*libaio' || { log "$fio has no libaio engine"; exit 1; }

eval "$("$src/scripts/kernel-cache.sh")"
mods=$TCMUD_KERNEL_MODULES/kernel

stage=$(mktemp -d "$work/stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# copy_libs DEST BIN...: every shared library BIN loads (ldd), resolved.
copy_libs() {
	local dest=$1 lib
	shift
	mkdir -p "$dest"
	for lib in $(ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do
		cp -L "$lib" "$dest/"
	done
}

# ---- host: QEMU and what it loads
h=$stage/host
mkdir -p "$h/bin" "$h/lib" "$h/share" "$h/qemu-modules"
cp /usr/bin/qemu-system-x86_64 "$h/bin/"
cp /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so "$h/qemu-modules/"
copy_libs "$h/lib" /usr/bin/qemu-system-x86_64 "$h/qemu-modules/accel-tcg-x86_64.so"
cp -L /lib64/ld-linux-x86-64.so.2 "$h/lib/"
cp -L /usr/share/seabios/bios-256k.bin "$h/share/"
for fw in linuxboot_dma.bin linuxboot.bin kvmvapic.bin multiboot_dma.bin pvh.bin; do
	cp -L "/usr/share/qemu/$fw" "$h/share/"
done

# ---- guest: kernel + the whole root as an initramfs
g=$stage/guest
r=$stage/root
mkdir -p "$g" "$r"/{bin,dev,proc,sys,tmp,usr/bin,usr/sbin,lib64,lib/x86_64-linux-gnu,lib/ko/stock,lib/ko/patched}
cp "$TCMUD_KERNEL_IMAGE" "$g/vmlinuz"
cp /bin/busybox "$r/bin/busybox"
cp "$src/scripts/device-bench-init.sh" "$r/init"
chmod +x "$r/init"
cp "$fio" "$r/usr/bin/fio"
strip -o "$r/usr/bin/tcmud" "$tcmud"
cp /usr/sbin/mkfs.xfs "$r/usr/sbin/"
copy_libs "$r/lib/x86_64-linux-gnu" "$r/usr/bin/fio" "$r/usr/bin/tcmud" "$r/usr/sbin/mkfs.xfs"
cp -L /lib64/ld-linux-x86-64.so.2 "$r/lib64/"
for ko in drivers/scsi/scsi_common drivers/scsi/scsi_mod drivers/scsi/sd_mod fs/configfs/configfs \
	drivers/target/target_core_mod drivers/target/target_core_file drivers/uio/uio \
	drivers/target/target_core_user drivers/target/loopback/tcm_loop drivers/block/loop \
	crypto/crc32c_generic lib/libcrc32c fs/xfs/xfs; do
	xz -dc "$mods/$ko.ko.xz" > "$r/lib/ko/stock/$(basename "$ko").ko"
done
cp "$kmod/uio.ko" "$kmod/target_core_user.ko" "$r/lib/ko/patched/"
(cd "$r" && find . | cpio -o -H newc --quiet) > "$g/initramfs.cpio"

{
	echo "commit=$head (HEAD when the bundle was made)"
	echo "tcmud_from=$tcmud_from ($tcmud)"
	echo "kmod_from=$kmod_from ($kmod)"
	echo "fio_from=$fio_from ($fio)"
	echo "kernel=$TCMUD_KERNEL_ABI"
	echo "qemu=$(dpkg-query -W -f='${Version}' qemu-system-x86)"
	echo "fio=$("$fio" --version)"
	echo "tcmud=$("$tcmud" --version 2>&1 | head -n1)"
	echo "kmod=$kmod"
	for ko in uio target_core_user; do
		echo "$ko.ko build-id=$(readelf -n "$kmod/$ko.ko" | sed -n 's/.*Build ID: //p')"
	done
	for p in "$src"/kmod/patches/*.patch; do echo "patch=${p##*/}"; done
} > "$stage/BUILD"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - BUILD host guest | xz -T2 -9 > "$out.tmp"
mv "$out.tmp" "$out"
log "wrote $out ($(du -h "$out" | cut -f1); initramfs $(du -h "$g/initramfs.cpio" | cut -f1) uncompressed)"
