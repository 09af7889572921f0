#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's main job: installs what is missing, builds tcmud, boots a
# throwaway VM (the pinned Debian kernel under QEMU) in which tcmud serves a
# file-backed disk through LIO's tcm_loop, and runs a short fio job on it.
# It builds only what the demo runs (tcmud and tcmudctl: 106 of the tree's
# 261 build steps; the tests and fuzzers are the test command's), and says
# what it is doing at each step, the slow first-run ones included.
#
#   scripts/demo.sh [--build DIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
build=build
[ "${1:-}" = --build ] && build=$2
say() { echo "demo: $*"; }
say "checking the Debian packages it needs (a first run installs them with apt)"
scripts/install-deps.sh
if [ ! -f "$build/build.ninja" ]; then
	say "configuring $build"
	meson setup "$build" > /dev/null
fi
say "building tcmud and tcmudctl ($(ninja -C "$build" -n daemon/core/tcmud tools/tcmudctl/tcmudctl |
	grep -c '^\[') steps to do)"
ninja -C "$build" daemon/core/tcmud tools/tcmudctl/tcmudctl
say "fetching the pinned Debian kernel for the VM (first run only: about 250 MB)"
scripts/kernel-cache.sh > /dev/null
say "booting the VM (QEMU, emulated: a minute or two) and running fio on a tcmud disk"
rc=0
tests/vm/run --build "$build" --timeout 240 demo || rc=$?
cat "$build/vm-out/demo/demo.log"
exit $rc
