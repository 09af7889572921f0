#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs everything tcmud needs to build and test on Debian 12, with apt-get
# only. Idempotent: when every package is present it changes nothing and does
# not even refresh the package lists.
set -euo pipefail

packages=(
	# build
	g++ meson ninja-build pkg-config
	liburing-dev libnl-3-dev libnl-genl-3-dev libglib2.0-dev catch2
	# tests/fuzz: libFuzzer (clang 14 and its runtime, with ASan/UBSan)
	clang-14 libclang-rt-14-dev
	# the VM test bed: emulator, guest userland pieces, tools the guest runs
	qemu-system-x86 busybox-static kmod cpio xz-utils zstd
	fio sg3-utils targetcli-fb python3-rtslib-fb tcmu-runner dbus
	# kmod/: module BTF (pahole) and sparse checks of our kernel patches;
	# kmod/format-series.sh's git send-email --dry-run of the mail (Mail::Address)
	dwarves sparse git-email libmailtools-perl
	# the debug kernel (scripts/debug-kernel.sh): kconfig, objtool
	bc bison flex libelf-dev
	# VM error scenarios: device-mapper error targets
	dmsetup
	# benchmark backing store: XFS does async buffered reads and writes for io_uring
	xfsprogs
	# Debian packages (scripts/build-debs.sh), the DKMS check (kmod/dkms-check.sh)
	# and promtool for the metrics test
	debhelper dh-dkms lintian dkms prometheus
	# benchmark counts (callgrind) and its plot (scripts/bench-report.py)
	valgrind gnuplot-nox
	# tests/lint: every shell script shellcheck-clean
	shellcheck
	# the rbd handler (librbd, librados) and the one-node Ceph its tests run
	ceph-mon ceph-osd ceph-common librbd-dev
	# its mgr, for the service-map case of rbd-cluster (ceph-testbed.sh --mgr)
	ceph-mgr
	# scripts/ceph-testbed.sh: network namespaces and veth pairs; its agent
	iproute2 python3
	# the instruction counter's QEMU plugin header comes from qemu's source
	# package (tests/bench/insncount/fetch-qemu-header.sh: dpkg-source)
	dpkg-dev
)
# tcmud-dkms depends on linux-source-X.Y, which must be the source of the
# kernel the test bed boots (scripts/kernel.pin): the systemd guest, whose
# root is this machine's, installs tcmud-dkms and builds it from there.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernel.pin
. "$here/kernel.pin"
kseries=$(echo "$TCMUD_KERNEL_ABI" | cut -d. -f1,2)
versioned=("linux-source-$kseries=$TCMUD_KERNEL_DEB_VERSION")

# The QEMU plugin API header, which no Debian binary package ships, cached
# in /var/cache/tcmud (meson builds the insncount plugin when it is there).
# A failed download only costs the benchmark's --insn mode: not fatal.
qemu_plugin_header() {
	local here
	here=$(cd "$(dirname "$0")/.." && pwd)
	"$here/tests/bench/insncount/fetch-qemu-header.sh" >/dev/null ||
		echo "install-deps: no QEMU plugin header (scripts/bench.sh --insn will not work)" >&2
}

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing+=("$p")
	fi
done
for pv in "${versioned[@]}"; do
	if [ "$(dpkg-query -W -f='${Status} ${Version}' "${pv%%=*}" 2>/dev/null)" != \
	     "install ok installed ${pv#*=}" ]; then
		missing+=("$pv")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all $(( ${#packages[@]} + ${#versioned[@]} )) packages present"
	qemu_plugin_header
	exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
qemu_plugin_header
