#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fetch-qemu-header.sh - the QEMU plugin API header (include/qemu/qemu-plugin.h)
# of the INSTALLED qemu-system-x86, which Debian does not ship in any binary
# package. Downloads that version's source package through a private deb-src
# list (the host's apt configuration is not touched), takes the one header out
# of it and caches it; prints the header's directory on stdout.
#
#   tests/bench/insncount/fetch-qemu-header.sh [--cached] [CACHE]
#   CACHE default: /var/cache/tcmud/qemu-plugin (shared, never deleted)
#   --cached: only look into the cache (exit 1 if the header is not there);
#             what meson runs at configure time

#
# The plugin ABI is checked at load time (QEMU_PLUGIN_VERSION), so a header
# of another qemu version would build but might not load: the cache is keyed
# by the source version (binNMU suffix +bN stripped: same source).
set -euo pipefail
cached_only=0
[ "${1:-}" = --cached ] && { cached_only=1; shift; }
cache=${1:-/var/cache/tcmud/qemu-plugin}
ver=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null) ||
	{ echo "fetch-qemu-header: qemu-system-x86 is not installed" >&2; exit 2; }
srcver=${ver%+b[0-9]*}
dest=$cache/${srcver//:/_}
if [ -f "$dest/qemu-plugin.h" ]; then
	echo "$dest"
	exit 0
fi
[ $cached_only = 0 ] || exit 1
mkdir -p "$cache"
exec 9> "$cache/.lock"
flock 9
[ -f "$dest/qemu-plugin.h" ] && { echo "$dest"; exit 0; }
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
mkdir -p "$work/apt/sources.d" "$work/apt/lists/partial" "$work/src"
cat > "$work/apt/sources.d/qemu-src.sources" <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $codename-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
apto=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$work/apt/sources.d"
	-o Dir::State::lists="$work/apt/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
apt-get "${apto[@]}" -q update >&2
(cd "$work/src" && apt-get "${apto[@]}" -o APT::Sandbox::User=root -q source --download-only "qemu=$srcver") >&2
# Only the header is needed: unpack the package (upstream tarball + Debian's
# patches, which could touch it) but keep one file. dpkg-source -x of all of
# qemu takes minutes and a few hundred MB; the whole stream must be
# decompressed either way.
(cd "$work/src" && dpkg-source -x --skip-debianization qemu_*.dsc qemu) >/dev/null 2>&1 ||
	(cd "$work/src" && dpkg-source -x qemu_*.dsc qemu) >&2
hdr=$work/src/qemu/include/qemu/qemu-plugin.h
[ -f "$hdr" ] || { echo "fetch-qemu-header: no include/qemu/qemu-plugin.h in qemu $srcver" >&2; exit 1; }
mkdir -p "$dest.tmp"
cp "$hdr" "$dest.tmp/"
echo "$srcver" > "$dest.tmp/version"
mv "$dest.tmp" "$dest"
echo "fetch-qemu-header: qemu $srcver: $(grep -m1 'define QEMU_PLUGIN_VERSION' "$dest/qemu-plugin.h")" >&2
echo "$dest"
