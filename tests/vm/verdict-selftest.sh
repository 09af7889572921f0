#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Checks that tests/vm/verdict fails what it must: a non-zero exit, a
# timeout, a missing result (the guest died), and a kernel splat inside one
# scenario's window (only that scenario) or outside every window (all), and
# a sanitizer report in a scenario's tcmud log (only that scenario); and
# that exit 77 is a skip, neither pass nor fail, unless the kernel splats.
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
check skip-77 0 "a pass b skip " "a 0 3\nb 77 1\n" ""
check skip-77-splat 1 "a pass b fail " "a 0 3\nb 77 1\n" \
	"$(mark a start)$(mark a end)$(mark b start)[ 2.0] WARNING: CPU: 0 PID: 1 at drivers/target/x.c:1\\n$(mark b end)"
check clean-tcmud-log 0 "a pass b pass " "a 0 3\nb 0 4\n" "" "tcmud: ready, serving\n"

# Each checker of the debug kernel, by the first line it prints (lines as
# 6.12 prints them), inside scenario a's window: a must fail, b must not.
in_a() { printf '%s[ 5.0] %s\\n%s' "$(mark a start)" "$1" "$(mark a end)"; }
kind() { check "$1" 1 "a fail b pass " "a 0 3\nb 0 4\n" "$(in_a "$2")"; }
kind lockdep-circular 'WARNING: possible circular locking dependency detected'
kind lockdep-irq-inversion 'WARNING: inconsistent lock state'
kind lockdep-non-static-key 'INFO: trying to register non-static key.'
kind lockdep-off 'turning off the locking correctness validator.'
kind lockdep-off-taint 'Disabling lock debugging due to kernel taint'
kind kasan 'BUG: KASAN: slab-use-after-free in tcmu_handle_completions+0x1c4/0x9a0 [target_core_user]'
kind might-sleep 'BUG: sleeping function called from invalid context at kernel/locking/mutex.c:585'
kind sleep-atomic 'BUG: scheduling while atomic: tcmud/212/0x00000002'
kind list-add 'list_add corruption. prev->next should be next (ffff888004a1c0e8), but was 0000000000000000. (prev=ffff888004a1c0e8).'
kind list-double-add 'list_add double add: new=ffff888004a1c0e8, prev=ffff888004a1c0e8, next=ffff888004a1c100.'
kind list-del 'list_del corruption, ffff888004a1c0e8->next is LIST_POISON1 (dead000000000100)'
kind ubsan 'UBSAN: shift-out-of-bounds in drivers/target/target_core_user.c:1234:17'
kind odebug 'ODEBUG: free active (active state 0) object: ffff888004a1c0e8 object type: timer_list hint: tcmu_cmd_timedout+0x0/0x80'
kind rcu-stall 'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
exit $((failures > 0))
