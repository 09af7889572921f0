#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Proves on the real debug kernel what verdict-selftest.sh proves on canned
# lines: each checker is on, and its report fails the scenario it happened
# in. One boot runs provoke-KIND for lockdep, might_sleep, DEBUG_LIST, UBSAN
# and KASAN, in that order: lockdep turns itself off after its first report,
# and a KASAN report taints the kernel with "lock debugging unreliable",
# which turns lockdep off too. Each must be judged FAIL, with its checker's
# own line in its window.
#
#   tests/vm/debug-selfcheck.sh [--build DIR]     (exit 0: all five caught)
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build
[ "${1:-}" = --build ] && build=$(realpath "$2")

eval "$("$src/scripts/debug-kernel.sh")" || exit 1
mod=$build/provoke-debug
rm -rf "$mod"
mkdir -p "$mod"
cp "$src/tests/vm/provoke/provoke.c" "$src/tests/vm/provoke/Kbuild" "$mod/"
if ! make -C "$TCMUD_KERNEL_HEADERS" M="$mod" W=1 modules > "$mod/make.log" 2>&1 ||
	grep -q 'warning:' "$mod/make.log"; then
	cat "$mod/make.log"; echo "debug-selfcheck: provoke module build failed"; exit 1
fi

kinds=(lockdep sleep list ubsan kasan)
declare -A want=(
	[kasan]='BUG: KASAN: slab-use-after-free in provoke_'
	[list]='list_add double add'
	[ubsan]='UBSAN: shift-out-of-bounds'
	[sleep]='BUG: sleeping function called from invalid context'
	[lockdep]='WARNING: possible circular locking dependency detected'
)
out=$build/vm-out/debug-selfcheck
"$src/tests/vm/run" --kernel debug --build "$build" --out "$out" --timeout 120 \
	"${kinds[@]/#/provoke-}" > "$out.log" 2>&1
cat "$out.log"

bad=0
for k in "${kinds[@]}"; do
	name=provoke-$k
	rc=$(awk -v n="$name" '$1 == n { print $2 }' "$out/results" 2>/dev/null)
	verdict=$(awk -v n="$name" '$1 == n { print $2 }' "$out/verdict" 2>/dev/null)
	window=$(sed -n "/tcmud-vm: scenario $name start/,/tcmud-vm: scenario $name end/p" "$out/dmesg.log" 2>/dev/null)
	if [ "$rc" != 0 ]; then
		echo "not ok $k: the scenario itself exited ${rc:-nothing} (see $out/$name.log)"; bad=1
	elif [ "$verdict" != fail ]; then
		echo "not ok $k: the verdict passed it"; bad=1
	elif ! grep -qF "${want[$k]}" <<< "$window"; then
		echo "not ok $k: no '${want[$k]}' in its window of $out/dmesg.log"; bad=1
	else
		echo "ok $k: $(grep -F "${want[$k]}" <<< "$window" | head -n1 | sed 's/^\[[^]]*\] //')"
	fi
done
exit $bad
