#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The restart soak (not in CI): one VM boot in which tcmud is SIGKILLed at
# random points (0.3-2 s apart) and restarted, again and again, while fio
# write+verify passes run on its disk, for DURATION seconds (default one
# hour). Each restart must take the disk over; each pass must verify.
# Prints the summary (kills, take-overs, passes, fio errors, verify result)
# and the verdict; exit status 0 only if the soak passed.
#
#   scripts/soak.sh [--build DIR] [--duration SECONDS] [--kmod DIR]
#
# --kmod runs it on the patched modules (see tests/vm/run). The build must
# exist (ninja -C DIR); the log is DIR/vm-out/tcmud-soak/.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
build=build duration=3600 kmod=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--kmod) kmod=(--kmod "$2"); shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--duration SECONDS] [--kmod DIR]" >&2; exit 2 ;;
	esac
done
if ! [[ $duration =~ ^[0-9]+$ ]] || [ "$duration" -lt 60 ]; then
	echo "--duration wants >= 60" >&2; exit 2
fi
[ -x "$build/daemon/core/tcmud" ] || { echo "no $build/daemon/core/tcmud: build first" >&2; exit 2; }

# The scenario soaks for its time limit less 300 s (set-up, the last pass
# and tear-down), so the limit carries the duration into the guest.
out=$build/vm-out/tcmud-soak
rc=0
tests/vm/run --build "$build" --out "$out" "${kmod[@]}" --timeout $((duration + 300)) \
	tcmud-soak || rc=$?
grep -h "soak summary" "$out/tcmud-soak.log" 2>/dev/null || echo "soak: no summary (see $out)"
cat "$out/verdict" 2>/dev/null || true
exit $rc
