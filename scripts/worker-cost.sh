#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The queue worker's user-space instructions per command, counted by
# callgrind on the host (no VM): tests/bench/worker_cost drives one worker on
# the in-process ring model with a ram LUN; only the worker thread's
# instructions are counted, divided by the number of commands. Repeatable to
# the instruction for the same binary and arguments.
#
#   scripts/worker-cost.sh [--build DIR] [--commands N] [--batch B] [--op read|write]
#                          [--subtype ram|file] [--fixed] [--top K] [--keep DIR]
# --subtype file: a temp file through the file handler (io_uring reads and
# writes; their kernel side is not counted). --fixed: the ring model's
# mailbox offers a fixed data area, so the worker registers it and the file
# handler reads and writes with READ_FIXED/WRITE_FIXED. --keep DIR: leave the larger
# run's callgrind file there, for callgrind_annotate --inclusive=yes.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build commands=20000 batch=8 op=read top=15 subtype=ram keep="" fixed=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--commands) commands=$2; shift 2 ;;
	--batch) batch=$2; shift 2 ;;
	--op) op=$2; shift 2 ;;
	--top) top=$2; shift 2 ;;
	--subtype) subtype=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	--fixed) fixed=1; shift ;;
	*) echo "usage: $0 [--build DIR] [--commands N] [--batch B] [--op read|write] [--subtype ram|file] [--fixed] [--top K] [--keep DIR]" >&2; exit 2 ;;
	esac
done
command -v valgrind >/dev/null || { echo "worker-cost: valgrind is not installed" >&2; exit 77; }
exe=$build/tests/bench/worker_cost
[ -x "$exe" ] || { echo "worker-cost: $exe missing (ninja -C $build)" >&2; exit 2; }
out=$(mktemp -d /tmp/worker-cost.XXXXXX)
trap 'rm -rf "$out"' EXIT

# run COMMANDS -> the worker thread's instruction total
run() {
	rm -f "$out"/cg.*
	WORKER_COST_COMMANDS=$1 WORKER_COST_BATCH=$batch WORKER_COST_OP=$op WORKER_COST_SUBTYPE=$subtype WORKER_COST_FIXED=$fixed \
		valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$out/cg.%p" "$exe" "[bench]" >"$out/log" 2>&1 \
		|| { cat "$out/log" >&2; exit 1; }
	local f
	# The worker's thread: the one that drives an io_uring (with LTO,
	# serve() may be inlined away).
	f=$(grep -lE 'queue_worker::serve|io_uring_submit' "$out"/cg.* | head -1)
	[ -n "$f" ] || { echo "worker-cost: no thread ran queue_worker::serve" >&2; exit 1; }
	cp "$f" "$out/worker.$1"
	awk '/^(summary|totals):/ { print $2; exit }' "$f"
}

# Two runs, N and 2N commands: the difference is the steady state per
# command, free of the worker's set-up and teardown.
small=$(run "$commands")
large=$(run $((commands * 2)))
per=$(awk -v a="$small" -v b="$large" -v n="$commands" 'BEGIN { printf "%.0f", (b - a) / n }')
echo "worker thread: $small instructions for $commands commands, $large for $((commands * 2))"
label=$subtype
[ "$fixed" = 1 ] && label="$subtype, fixed buffers"
echo "per command ($op 4 KiB, $label, $batch per doorbell): $per instructions"
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	cp "$out/worker.$commands" "$keep/callgrind.worker.$subtype.$op.small"
	cp "$out/worker.$((commands * 2))" "$keep/callgrind.worker.$subtype.$op"
fi
if [ "$top" -gt 0 ] && command -v callgrind_annotate >/dev/null; then
	echo "top functions (self, $((commands * 2)) commands):"
	callgrind_annotate --threshold=99 "$out/worker.$((commands * 2))" 2>/dev/null \
		| awk '/^-+$/ { sep++ ; next } sep >= 3 && NF' | head -n "$top"
fi
