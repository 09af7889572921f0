#!/usr/bin/env bash
# Checks that tests/vm/verdict fails what it must: a non-zero exit, a
# timeout, a missing result (the guest died), and a kernel splat inside one
# scenario's window (only that scenario) or outside every window (all), and
# a sanitizer report in a scenario's tcmud log (only that scenario).
set -uo pipefail
verdict=$(dirname "$0")/verdict
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# case NAME EXPECTED_EXIT EXPECTED_VERDICT_LINES RESULTS DMESG [B_TCMUD_LOG]
check() {
	local name=$1 want_rc=$2 want=$3 results=$4 dmesg=$5 out=$tmp/$1
	mkdir -p "$out"
	printf '%b' "$results" > "$out/results"
	printf '%b' "$dmesg" > "$out/dmesg.log"
	[ -n "${6:-}" ] && printf '%b' "$6" > "$out/b.tcmud.log"
	"$verdict" "$out" a b > "$out/stdout" 2>&1
	local rc=$? got
	got=$(tr '\n' ' ' < "$out/verdict")
	if [ "$rc" != "$want_rc" ] || [ "$got" != "$want" ]; then
		echo "not ok $name: exit $rc (want $want_rc), verdict '$got' (want '$want')"
		failures=$((failures + 1))
	else
		echo "ok $name"
	fi
}
mark() { printf '[ 1.0] tcmud-vm: scenario %s %s\\n' "$1" "$2"; }

check all-pass 0 "a pass b pass " "a 0 3\nb 0 4\n" "$(mark a start)$(mark a end)$(mark b start)$(mark b end)"
check exit-status 1 "a fail b pass " "a 1 3\nb 0 4\n" ""
check timeout 1 "a pass b fail " "a 0 3\nb 124 300\n" ""
check guest-died 1 "a pass b fail " "a 0 3\n" ""
check warn-in-b 1 "a pass b fail " "a 0 3\nb 0 4\n" \
	"$(mark a start)$(mark a end)$(mark b start)[ 2.0] WARNING: CPU: 0 PID: 1 at drivers/target/x.c:1\\n$(mark b end)"
check oops-outside 1 "a fail b fail " "a 0 3\nb 0 4\n" "[ 9.0] BUG: kernel NULL pointer dereference\\n"
check hung-task 1 "a fail b pass " "a 0 3\nb 0 4\n" \
	"$(mark a start)[ 3.0] INFO: task fio:12 blocked for more than 60 seconds.\\n$(mark a end)"
check asan-in-b 1 "a pass b fail " "a 0 3\nb 0 4\n" "" \
	"tcmud: ready, serving\n==42==ERROR: AddressSanitizer: heap-use-after-free on address 0x1\n"
check ubsan-in-b 1 "a pass b fail " "a 0 3\nb 0 4\n" "" \
	"../daemon/scsi/unmap.cpp:80:5: runtime error: signed integer overflow\n"
check clean-tcmud-log 0 "a pass b pass " "a 0 3\nb 0 4\n" "" "tcmud: ready, serving\n"
exit $((failures > 0))
