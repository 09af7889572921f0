#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the libFuzzer targets of tests/fuzz (clang 14, ASan+UBSan, in a build
# directory of their own).
#
#   scripts/fuzz.sh [--smoke] [--time S] [--build DIR] [--out DIR] [TARGET...]
#
# --smoke   CI's run: each target in turn for --time seconds (default 15)
#           from the committed seed corpus; any finding fails. One line per
#           target: "fuzz-smoke TARGET: pass|FAIL ...".
# default   a long campaign: every target at once, at nice 19, for --time
#           seconds (default 3600), going on after a finding;
#           corpora grow in OUT/corpus/TARGET, findings land in
#           OUT/findings/TARGET-*, and OUT/summary gets one line per target
#           with execs, coverage (cov/ft), corpus size and findings.
# Oracles of defects listed in tests/fuzz/waive are waived (noted on
# stderr), so a campaign looks past what is being fixed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit
all=(ring scsi backstore control config netlink dbus)
smoke=0 time="" build=build-fuzz out=""
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1; shift ;;
	--time) time=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-*) echo "usage: $0 [--smoke] [--time S] [--build DIR] [--out DIR] [TARGET...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
if [ "$smoke" = 1 ]; then time=${time:-15}; else time=${time:-3600}; fi
out=${out:-$build/fuzz-out}

if [ ! -f "$build/build.ninja" ]; then
	CC=clang-14 CXX=clang++-14 meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dvm_tests=false >/dev/null || { echo "fuzz: meson setup failed"; exit 1; }
fi
ninja -C "$build" "${targets[@]/#/tests/fuzz/fuzz_}" >/dev/null ||
	{ echo "fuzz: build failed"; ninja -C "$build" "${targets[@]/#/tests/fuzz/fuzz_}" | tail -20; exit 1; }

waive=$(grep -v '^\s*\(#\|$\)' tests/fuzz/waive | paste -sd, -)
export TCMUD_FUZZ_WAIVE=$waive
# Reports, not just crashes: UBSan findings abort too, leaks are checked.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mkdir -p "$out"

# figures LOG: "N execs, cov C, ft F, corpus K" from libFuzzer's last status line.
figures() {
	grep -aE '^#[0-9]+' "$1" | tail -n1 | awk '{
		n = substr($1, 2); sub(/:$/, "", n)
		for (i = 2; i <= NF; i++) {
			if ($i == "cov:") c = $(i+1); if ($i == "ft:") f = $(i+1); if ($i == "corp:") k = $(i+1)
		}
		printf "%s execs, cov %s, ft %s, corpus %s", n, c, f, k }'
}

if [ "$smoke" = 1 ]; then
	failed=0
	for t in "${targets[@]}"; do
		work=$(mktemp -d)
		log=$out/smoke-$t.log
		"$build/tests/fuzz/fuzz_$t" -max_total_time="$time" -timeout=10 -print_final_stats=1 \
			-artifact_prefix="$out/smoke-$t-" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1
		rc=$?
		rm -rf "$work"
		if [ $rc = 0 ]; then
			echo "fuzz-smoke $t: pass ($(figures "$log"))"
		else
			echo "fuzz-smoke $t: FAIL (exit $rc): $(grep -m1 -aE 'ORACLE FAILED|ERROR:|runtime error' "$log")"
			inputs=("$out"/smoke-"$t"-*)
			echo "    input: ${inputs[0]}; log: $log"
			failed=1
		fi
	done
	exit $failed
fi

# campaign TARGET: runs it until the time is up. A finding ends a libFuzzer
# run (its input lands in findings/); the next run goes on from the corpus.
# (Not -fork: on a loaded 2-core host its per-job restarts cost 3-5x.)
campaign() {
	local t=$1 end=$(($(date +%s) + time)) left run=0
	while left=$((end - $(date +%s))); [ "$left" -gt 5 ]; do
		run=$((run + 1))
		nice -n 19 "$build/tests/fuzz/fuzz_$t" -max_total_time="$left" -timeout=10 \
			-print_final_stats=1 -artifact_prefix="$out/findings/$t-" \
			"$out/corpus/$t" "tests/fuzz/corpus/$t" >"$out/$t.run$run.log" 2>&1
	done
	echo "$run" >"$out/$t.runs"
}

pids=()
for t in "${targets[@]}"; do
	mkdir -p "$out/corpus/$t" "$out/findings"
	campaign "$t" &
	pids+=($!)
done
wait "${pids[@]}"
: >"$out/summary"
for t in "${targets[@]}"; do
	n=0
	for f in "$out/findings/$t-"*; do [ -e "$f" ] && n=$((n + 1)); done
	execs=$(cat "$out/$t".run*.log | grep -a '^stat::number_of_executed_units' |
		awk '{ s += $2 } END { print s + 0 }')
	# shellcheck disable=SC2012 # ls -t sorts by age; these names are ours, without blanks
	last=$(ls -t "$out/$t".run*.log | head -n1)
	echo "$t: $execs execs in $(cat "$out/$t.runs") run(s), last $(figures "$last"), $n findings" |
		tee -a "$out/summary"
done
