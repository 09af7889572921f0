#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the tcmud and tcmud-dkms Debian packages from this tree with
# dpkg-buildpackage (binary only, unsigned) and checks them with lintian,
# failing on any error or warning. The tree is copied first (git's files,
# committed or not) so dpkg-buildpackage's output lands in OUTDIR and the
# work tree stays clean.
#
#   scripts/build-debs.sh [OUTDIR]      (default build/debs)
#
# OUTDIR/upgrade/ gets a copy of the tcmud package one version higher, for
# the systemd guest's upgrade test (tests/vm/scenarios/systemd-tcmud-faults).
#
# Needs debhelper, dh-dkms, lintian and debian/control's Build-Depends,
# librbd-dev among them (scripts/install-deps.sh installs them all; this
# script installs nothing): dpkg-buildpackage refuses to start without one,
# and meson (-Drbd=enabled in debian/rules) fails without librbd.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/build/debs}")
log() { echo "build-debs: $*" >&2; }

scratch=$(mktemp -d /tmp/tcmud-debs.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/tcmud"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 cp --parents -t "$scratch/tcmud")
start=$(date +%s)
log "dpkg-buildpackage -b in $scratch/tcmud"
(cd "$scratch/tcmud" && DEB_BUILD_OPTIONS="parallel=2 nocheck" \
	nice -n 10 dpkg-buildpackage -b -us -uc > "$scratch/build.log" 2>&1) ||
	{ tail -n 40 "$scratch/build.log" >&2; log "dpkg-buildpackage failed"; exit 1; }
log "built in $(( $(date +%s) - start )) s"
rm -rf "$out"
mkdir -p "$out"
cp "$scratch"/*.deb "$scratch"/*.changes "$scratch"/*.buildinfo "$out/"
cp "$scratch/build.log" "$out/"
# --fail-on warning: any E: or W: fails; I: and P: tags are information.
if ! lintian --fail-on error,warning --suppress-tags-from-file /dev/null \
	"$out"/*.changes > "$out/lintian.log" 2>&1; then
	cat "$out/lintian.log" >&2
	log "lintian: errors or warnings"
	exit 1
fi
log "lintian: $(grep -c . "$out/lintian.log" || true) lines, no error or warning"

# For the upgrade test of the systemd guest: the same tcmud package under a
# higher version, so apt runs the maintainer scripts of a real upgrade.
deb=$(ls "$out"/tcmud_*_amd64.deb)
mkdir -p "$scratch/up" "$out/upgrade"
dpkg-deb -R "$deb" "$scratch/up/root"
sed -i 's/^Version: .*/&+upgradetest1/' "$scratch/up/root/DEBIAN/control"
dpkg-deb -Zxz -z1 --root-owner-group -b "$scratch/up/root" "$out/upgrade/" > /dev/null
ls "$out"/*.deb
