#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's main job: installs what is missing, builds tcmud, boots a
# throwaway VM (the pinned Debian kernel under QEMU) in which tcmud serves a
# file-backed disk through LIO's tcm_loop, and runs a short fio job on it.
#
#   scripts/demo.sh [--build DIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
build=build
[ "${1:-}" = --build ] && build=$2
scripts/install-deps.sh
[ -f "$build/build.ninja" ] || meson setup "$build"
ninja -C "$build"
rc=0
tests/vm/run --build "$build" --timeout 240 demo || rc=$?
cat "$build/vm-out/demo/demo.log"
exit $rc
