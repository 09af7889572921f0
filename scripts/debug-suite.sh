#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The VM suites on the debug kernel (lockdep, KASAN, might_sleep, list and
# object debugging, UBSAN): builds that kernel first if it is not cached (a
# cold build is 30-60 min on 2 shared cores, too long for CI, which runs only
# tests/vm/debug.list and only when the build is cached), builds tcmud and
# the patched modules against it, then boots once per suite. Any checker's
# report fails the scenario it happened in (tests/vm/verdict).
#
#   scripts/debug-suite.sh [--build DIR] [SUITE...]
#
# SUITE is stock, patched or debug (tests/vm/SUITE.list); default: stock
# patched. Ends with "N passed, N failed" and writes the same, with the
# kernel's build time and each scenario's time, to DIR/vm-out/debug-summary.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit
build=build suites=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	stock|patched|debug) suites+=("$1"); shift ;;
	*) echo "usage: $0 [--build DIR] [stock|patched|debug]..." >&2; exit 2 ;;
	esac
done
[ ${#suites[@]} -gt 0 ] || suites=(stock patched)

t0=$(date +%s)
vars=$(scripts/debug-kernel.sh) || { echo "debug kernel build failed"; exit 1; }
eval "$vars"
built=$(cat "$(dirname "$TCMUD_KERNEL_ROOT")/build-time" 2>/dev/null || echo unknown)
echo "debug-suite: kernel $TCMUD_KERNEL_ABI ready after $(( $(date +%s) - t0 )) s (its build: $built)"

if [ -f "$build/build.ninja" ]; then
	meson setup --reconfigure "$build" > /dev/null
else
	meson setup "$build" > /dev/null
fi || { echo "tcmud build failed"; exit 1; }
nice -n 10 ninja -C "$build" > /dev/null || { echo "tcmud build failed"; exit 1; }

kmod=$build/kmod-debug
kmod/build.sh --kernel debug "$kmod" || { echo "kmod build against the debug kernel failed"; exit 1; }

passed=0 failed=0 skipped=0
summary=$build/vm-out/debug-summary
mkdir -p "$build/vm-out"
{
	echo "debug-suite $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo none)"
	echo "kernel $TCMUD_KERNEL_ABI, build: $built"
} > "$summary"
# First, that every checker is on and its report fails a scenario.
if tests/vm/debug-selfcheck.sh --build "$build" > "$build/vm-out/debug-selfcheck.txt" 2>&1; then
	passed=$((passed + 1))
	echo "selfcheck: pass" >> "$summary"
else
	failed=$((failed + 1))
	echo "selfcheck: FAIL (see $build/vm-out/debug-selfcheck.txt)" >> "$summary"
fi
grep -E '^(not )?ok ' "$build/vm-out/debug-selfcheck.txt" | sed 's/^/  /' | tee -a "$summary"
for suite in "${suites[@]}"; do
	list=tests/vm/$suite.list out=$build/vm-out/debug-$suite
	mapfile -t scenarios < <(grep -v '^\s*\(#\|$\)' "$list")
	[ ${#scenarios[@]} -gt 0 ] || continue
	args=(--kernel debug --build "$build" --out "$out" --timeout 600)
	[ "$suite" = stock ] || args+=(--kmod "$kmod")
	s0=$(date +%s)
	tests/vm/run "${args[@]}" "${scenarios[@]}"
	up=$(grep -ao 'guest: up after [0-9.]* s' "$out/console.log" 2>/dev/null | tail -n1)
	echo "$suite: one boot, $(( $(date +%s) - s0 )) s wall (${up:-guest never came up})" >> "$summary"
	for name in "${scenarios[@]}"; do
		verdict=$(awk -v n="$name" '$1 == n { print $2 }' "$out/verdict" 2>/dev/null)
		secs=$(awk -v n="$name" '$1 == n { print $3 }' "$out/results" 2>/dev/null)
		echo "  ${verdict:-fail} $name ${secs:-?} s" >> "$summary"
		case $verdict in
		pass) passed=$((passed + 1)) ;;
		skip) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
	done
done
echo "$skipped skipped" | tee -a "$summary"
echo "$passed passed, $failed failed" | tee -a "$summary"
[ "$failed" -eq 0 ]
