#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Mutation check: applies each deliberate bug of tests/mutants/mutants.list,
# one at a time, to a scratch copy of the committed tree, runs the checks the
# list names for it, and reports which of them caught it. Every mutant must
# be caught by every check listed for it: a check listed is a claim that
# that test or oracle covers the behaviour the mutant breaks. Not CI (about
# an hour on 2 cores); docs/mutants.md has the last run's table.
#
#   scripts/mutants.sh [--scratch DIR] [--fuzz-time S] [--out FILE] [ID...]
#
# --scratch DIR  where the copy and its build directories live (default
#                /tmp/tcmud-mutants; kept, so a second run builds
#                incrementally)
# --fuzz-time S  how long a fuzz check may run before the mutant counts as
#                missed by it (default 120)
# --out FILE     the table, as Markdown rows (default SCRATCH/table.md)
# ID...          only these mutants (default: all)
#
# The list: one block per mutant, "## ID area: what the bug is", then
#   file:  the file, from the tree's root
#   from:  one line of it, verbatim after "from: " (tabs included), which
#          must occur exactly once
#   to:    what replaces it
#   check: the checks, space-separated:
#          unit:NAME     the meson test NAME (gcc build), e.g. unit:scsi,
#                        unit:fuzz-replay-ring (the committed corpus)
#          fuzz:TARGET   tests/fuzz/TARGET under libFuzzer (clang, ASan),
#                        from a copy of its corpus, for --fuzz-time seconds
#          vm:SCENARIO   that tests/vm scenario in a stock-kernel boot
#          kmod:SCENARIO kmod/build.sh with the mutant, then that
#                        scenario on the patched modules
# A check "catches" a mutant when it fails (any failure: a test or oracle
# naming the broken behaviour is what the list claims, read the log). Each
# check's log: SCRATCH/logs/ID.CHECK.log.
# Exit status: 0 when every listed check caught its mutant, 1 otherwise,
# 2 on a usage or set-up error.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
scratch=/tmp/tcmud-mutants fuzz_time=120 out=""
while [ $# -gt 0 ]; do
	case $1 in
	--scratch) scratch=$2; shift 2 ;;
	--fuzz-time) fuzz_time=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-*) echo "usage: $0 [--scratch DIR] [--fuzz-time S] [--out FILE] [ID...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
only=("$@")
list=$src/tests/mutants/mutants.list
tree=$scratch/src
out=${out:-$scratch/table.md}
logs=$scratch/logs
log() { echo "mutants: $*" >&2; }

# The committed tree (HEAD), not the working tree: a mutant applies to what
# CI tests. A clone, so each mutant is undone with a checkout, and a later
# run's reset rewrites only changed files: its builds stay warm.
mkdir -p "$scratch" "$logs"
if [ ! -d "$tree/.git" ]; then
	git clone -q "$src" "$tree" || { log "git clone failed"; exit 2; }
fi
if ! { git -C "$tree" fetch -q "$src" HEAD && git -C "$tree" reset -q --hard FETCH_HEAD; }; then
	log "cannot bring $tree to $src's HEAD"
	exit 2
fi

gcc_build=$scratch/build
fuzz_build=$scratch/build-fuzz
setup_gcc() {
	[ -f "$gcc_build/build.ninja" ] ||
		meson setup "$gcc_build" "$tree" > "$logs/setup-gcc.log" 2>&1 ||
		{ log "meson setup failed: $logs/setup-gcc.log"; return 1; }
}
setup_fuzz() {
	[ -f "$fuzz_build/build.ninja" ] ||
		CC=clang-14 CXX=clang++-14 meson setup "$fuzz_build" "$tree" -Dfuzz=true \
			-Db_sanitize=address,undefined -Db_lundef=false -Dvm_tests=false \
			> "$logs/setup-fuzz.log" 2>&1 ||
		{ log "meson setup (fuzz) failed: $logs/setup-fuzz.log"; return 1; }
}

# apply_mutant FILE FROM TO: replaces the one line FROM with TO.
apply_mutant() {
	python3 - "$tree/$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
lines = text.split("\n")
hits = [i for i, l in enumerate(lines) if l == old]
if len(hits) != 1:
    sys.exit(f"{len(hits)} lines of {path} are the mutant's 'from' line (need exactly 1)")
lines[hits[0]] = new
open(path, "w").write("\n".join(lines))
EOF
}

# run_check CHECK ID: 0 if the check passed (missed the mutant), 1 if it
# failed (caught it), 2 if it could not run, 3 if the mutant did not build
# (a mutant the compiler refuses proves nothing about the tests).
run_check() {
	local check=$1 id=$2 kind=${1%%:*} what=${1#*:} log
	log=$logs/$id.${check//:/-}.log
	case $kind in
	unit)
		setup_gcc || return 2
		ninja -C "$gcc_build" > "$log" 2>&1 || { echo "build failed" >> "$log"; return 3; }
		meson test -C "$gcc_build" --no-rebuild --print-errorlogs "$what" >> "$log" 2>&1 && return 0
		grep -q "No tests defined\|Unknown test" "$log" && return 2
		return 1 ;;
	fuzz)
		setup_fuzz || return 2
		ninja -C "$fuzz_build" "tests/fuzz/fuzz_$what" > "$log" 2>&1 ||
			{ echo "build failed" >> "$log"; return 3; }
		local corpus=$scratch/corpus-$what
		rm -rf "$corpus" "$scratch/artifact-$what"*
		mkdir -p "$corpus"
		cp -r "$tree/tests/fuzz/corpus/$what/." "$corpus/"
		for d in crashers known; do
			[ -d "$tree/tests/fuzz/$d/$what" ] && cp -r "$tree/tests/fuzz/$d/$what/." "$corpus/"
		done
		(cd "$scratch" && UBSAN_OPTIONS=halt_on_error=1 "$fuzz_build/tests/fuzz/fuzz_$what" \
			-max_total_time="$fuzz_time" -artifact_prefix="$scratch/artifact-$what-" \
			"$corpus") >> "$log" 2>&1 && return 0
		return 1 ;;
	vm)
		setup_gcc || return 2
		ninja -C "$gcc_build" > "$log" 2>&1 || { echo "build failed" >> "$log"; return 3; }
		"$tree/tests/vm/run" --build "$gcc_build" --out "$scratch/vm-$id" "$what" >> "$log" 2>&1
		case $? in 0) return 0 ;; 77) return 2 ;; *) return 1 ;; esac ;;
	kmod)
		setup_gcc || return 2
		ninja -C "$gcc_build" > "$log" 2>&1 || { echo "build failed" >> "$log"; return 3; }
		rm -rf "$scratch/kmod-$id"
		"$tree/kmod/build.sh" "$scratch/kmod-$id" >> "$log" 2>&1 ||
			{ echo "kmod build failed" >> "$log"; return 3; }
		"$tree/tests/vm/run" --build "$gcc_build" --kmod "$scratch/kmod-$id" \
			--out "$scratch/vm-$id" "$what" >> "$log" 2>&1
		case $? in 0) return 0 ;; 77) return 2 ;; *) return 1 ;; esac ;;
	*) echo "unknown check kind $kind" > "$log"; return 2 ;;
	esac
}

# Parse the list into parallel arrays.
ids=() areas=() titles=() files=() froms=() tos=() checks=()
while IFS= read -r line; do
	case $line in
	"## "*)
		rest=${line#"## "}
		ids+=("${rest%% *}")
		rest=${rest#* }
		areas+=("${rest%%:*}")
		titles+=("${rest#*: }")
		files+=("") froms+=("") tos+=("") checks+=("") ;;
	"file: "*) files[-1]=${line#"file: "} ;;
	"from: "*) froms[-1]=${line#"from: "} ;;
	"to: "*) tos[-1]=${line#"to: "} ;;
	"check: "*) checks[-1]=${line#"check: "} ;;
	esac
done < "$list"

selected() {
	[ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]
}

# The unmutated tree must pass every unit and fuzz check used, or "caught"
# means nothing: each once, a fuzz target on its committed inputs only (a
# full-length baseline is a campaign: scripts/fuzz.sh). The vm and kmod
# scenarios are CI's, which passes them.
declare -A baseline=()
for i in "${!ids[@]}"; do
	selected "${ids[$i]}" || continue
	for c in ${checks[$i]}; do
		case $c in unit:*|fuzz:*) baseline[$c]=1 ;; esac
	done
done
git -C "$tree" checkout -q -- . && git -C "$tree" clean -qfd
for c in "${!baseline[@]}"; do
	if [[ $c == fuzz:* ]]; then
		setup_fuzz && ninja -C "$fuzz_build" "tests/fuzz/fuzz_${c#fuzz:}" > "$logs/baseline.${c//:/-}.log" 2>&1 &&
			"$fuzz_build/tests/fuzz/fuzz_${c#fuzz:}" -runs=0 "$tree/tests/fuzz/corpus/${c#fuzz:}" \
				>> "$logs/baseline.${c//:/-}.log" 2>&1
		rc=$?
	else
		run_check "$c" baseline
		rc=$?
	fi
	if [ $rc != 0 ]; then
		log "the unmutated tree fails $c ($logs/baseline.${c//:/-}.log): fix that first"
		exit 2
	fi
	log "baseline: $c passes unmutated"
done

{
	echo "| Mutant | Area | The bug | Caught by |"
	echo "|---|---|---|---|"
} > "$out"
missed=0 total=0
start=$(date +%s)
for i in "${!ids[@]}"; do
	id=${ids[$i]}
	selected "$id" || continue
	total=$((total + 1))
	git -C "$tree" checkout -q -- . && git -C "$tree" clean -qfd
	if ! err=$(apply_mutant "${files[$i]}" "${froms[$i]}" "${tos[$i]}" 2>&1); then
		log "$id: not applied: $err"
		echo "| $id | ${areas[$i]} | ${titles[$i]} | **not applied**: $err |" >> "$out"
		missed=$((missed + 1))
		continue
	fi
	verdicts=()
	all_caught=1
	for c in ${checks[$i]}; do
		t0=$(date +%s)
		run_check "$c" "$id"
		rc=$?
		dt=$(( $(date +%s) - t0 ))
		case $rc in
		1) verdicts+=("\`$c\` ($dt s)") ;;
		0) verdicts+=("**missed by \`$c\`**"); all_caught=0 ;;
		3) verdicts+=("**did not build** for \`$c\`"); all_caught=0 ;;
		*) verdicts+=("\`$c\` could not run"); all_caught=0 ;;
		esac
	done
	[ "$all_caught" = 1 ] || missed=$((missed + 1))
	log "$id (${files[$i]}): ${verdicts[*]}"
	joined=$(printf '%s, ' "${verdicts[@]}")
	echo "| $id | ${areas[$i]} | ${titles[$i]} (\`${files[$i]}\`) | ${joined%, } |" >> "$out"
done
git -C "$tree" checkout -q -- . && git -C "$tree" clean -qfd
log "$total mutants, $((total - missed)) caught by every check listed, $missed not; $(( $(date +%s) - start )) s; table: $out"
[ "$missed" = 0 ]
