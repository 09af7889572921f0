#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the libFuzzer targets of tests/fuzz (clang 14, ASan+UBSan, in a build
# directory of their own).
#
#   scripts/fuzz.sh [--smoke] [--time S] [--runs N] [--jobs J] [--build DIR] [--out DIR] [TARGET...]
#
# --smoke   CI's run: each target in turn for --time seconds (default 15)
#           from the committed seed corpus; any finding fails. One line per
#           target: "fuzz-smoke TARGET: pass|FAIL ...".
# default   a long campaign: every target at once, at nice 19 in a
#           scheduling group at nice 19 (see lowest() below), for --time
#           seconds (default 3600), going on after a finding;
#           corpora grow in OUT/corpus/TARGET, findings land in
#           OUT/findings/TARGET-*, and OUT/summary gets one line per target
#           with execs, coverage (cov/ft), corpus size and findings.
#           A campaign into an OUT that holds one goes on from it: its
#           corpus, its run logs and (for --runs) its count.
# --runs N  a campaign target stops once it has run N inputs (over all its
#           runs), or when --time is up, whichever comes first.
# --jobs J  J libFuzzer processes per target on its one corpus (default 1),
#           so one slow target can have every core; their inputs add up.
# Oracles of defects listed in tests/fuzz/waive are waived (noted on
# stderr), so a campaign looks past what is being fixed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit
all=(ring scsi backstore control config netlink dbus)
smoke=0 time="" runs=0 jobs=1 build=build-fuzz out=""
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1; shift ;;
	--time) time=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-*) echo "usage: $0 [--smoke] [--time S] [--runs N] [--jobs J] [--build DIR] [--out DIR] [TARGET...]" >&2; exit 2 ;;
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

# executed LOG: inputs one libFuzzer run ran (its final stats, or its last
# status line when it died without them).
executed() {
	local n
	n=$(grep -a '^stat::number_of_executed_units' "$1" | awk '{ print $2 }')
	[ -n "$n" ] || n=$(grep -aoE '^#[0-9]+' "$1" | tail -n1 | tr -d '#')
	echo "${n:-0}"
}

# recheck TARGET: libFuzzer's timeout and slow-unit reports are wall time.
# Beside a CI run, or stopped with SIGSTOP, a fuzzer at nice 19 can be held
# for minutes on a 1 ms input (campaign 9: two "timeouts" and two slow
# units, each replaying in 0.04 s). An input that replays alone within 10 s
# was starved, not hung: it moves to OUT/starved, said on stderr, and is not
# counted. One that does not stays a finding.
recheck() {
	local t=$1 f
	for f in "$out/findings/$t"-timeout-* "$out/findings/$t"-slow-unit-*; do
		[ -e "$f" ] || continue
		if timeout -k 5 30 "$build/tests/fuzz/fuzz_$t" -timeout=10 "$f" >/dev/null 2>&1; then
			mkdir -p "$out/starved"
			mv "$f" "$out/starved/"
			echo "fuzz: ${f##*/} replays within 10 s: starved, not hung (now in starved/)" >&2
		fi
	done
}

# campaign TARGET JOB: runs it until the time is up. A finding ends a
# libFuzzer run (its input lands in findings/); the next run goes on from
# the corpus. Job 1 logs TARGET.runN.log, as before --jobs; job J > 1 logs
# TARGET.runN.jJ.log. Every job counts every job's inputs (a running
# log's last status line included) and takes its share of what is left.
# (Not -fork: on a loaded 2-core host its per-job restarts cost 3-5x.)
# -timeout=60, not CI's 10: libFuzzer's timeout is wall time, and at nice 19
# on a host at load 30 a 1 ms input was once held past 10 s (a false hang).
campaign() {
	local t=$1 j=$2 end=$(($(date +%s) + time)) left run=0 ran limit=() l suffix=""
	[ "$j" = 1 ] || suffix=.j$j
	for l in "$out/$t".run*"$suffix".log; do
		[ -e "$l" ] || continue
		[ -n "$suffix" ] || [[ $l != *.j*.log ]] || continue
		run=$((run + 1))
	done
	while left=$((end - $(date +%s))); [ "$left" -gt 5 ]; do
		if [ "$runs" -gt 0 ]; then
			ran=0
			for l in "$out/$t".run*.log; do
				[ -e "$l" ] && ran=$((ran + $(executed "$l")))
			done
			[ "$ran" -lt "$runs" ] || break
			limit=(-runs=$(((runs - ran + jobs - 1) / jobs)))
		fi
		run=$((run + 1))
		lowest "$build/tests/fuzz/fuzz_$t" -max_total_time="$left" -timeout=60 \
			"${limit[@]}" -print_final_stats=1 -artifact_prefix="$out/findings/$t-" \
			"$out/corpus/$t" "tests/fuzz/corpus/$t" >"$out/$t.run$run$suffix.log" 2>&1
		recheck "$t"
	done
}

# lowest CMD...: CMD at nice 19 in a session of its own whose scheduling
# group is at nice 19 too. Where the kernel groups tasks by session
# (CONFIG_SCHED_AUTOGROUP, on in Debian), each group gets an equal share
# whatever its tasks' nice: a campaign started with setsid beside a CI
# run took a third of both cores from it. /proc/self/autogroup is absent
# without autogroup; nice alone then does the job.
lowest() {
	# shellcheck disable=SC2016 # expanded by the inner sh
	setsid -w sh -c '{ echo 19 > /proc/self/autogroup; } 2>/dev/null; exec nice -n 19 "$@"' lowest "$@"
}

pids=()
for t in "${targets[@]}"; do
	mkdir -p "$out/corpus/$t" "$out/findings"
	for ((j = 1; j <= jobs; j++)); do
		campaign "$t" "$j" &
		pids+=($!)
	done
done
wait "${pids[@]}"
: >"$out/summary"
for t in "${targets[@]}"; do
	n=0
	for f in "$out/findings/$t-"*; do [ -e "$f" ] && n=$((n + 1)); done
	execs=0
	for l in "$out/$t".run*.log; do execs=$((execs + $(executed "$l"))); done
	# shellcheck disable=SC2012 # ls -t sorts by age; these names are ours, without blanks
	last=$(ls -t "$out/$t".run*.log | head -n1)
	nlogs=$(find "$out" -maxdepth 1 -name "$t.run*.log" | wc -l)
	echo "$t: $execs execs in $nlogs run(s), last $(figures "$last"), $n findings" |
		tee -a "$out/summary"
done
