#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's test command: installs what is missing, builds, runs the unit
# tests, then the VM suite (one boot of the stock kernel; one boot with the
# patched modules when kmod/ has scenarios; the Debian packages and the
# systemd guest that installs them; one boot of the debug kernel with the
# patched modules when that kernel is cached), and ends with one line:
# "N passed, N failed" — each unit-test program and each VM scenario counts once.
# A test that cannot run here (meson's SKIP, a VM scenario's exit 77) counts
# as neither: the line before the last says how many were skipped.
#
#   scripts/run-tests.sh [--no-vm] [--build DIR]
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit
build=build vm=1
while [ $# -gt 0 ]; do
	case $1 in
	--no-vm) vm=0; shift ;;
	--build) build=$2; shift 2 ;;
	*) echo "usage: $0 [--no-vm] [--build DIR]" >&2; exit 2 ;;
	esac
done
passed=0 failed=0 skipped=0
# What failed, by name, printed just before the last line: CI shows only the
# tail of a long run, and the tail must say which test to look at.
failures=()
# failed_one NAME: counts one failure and remembers its name.
failed_one() { failed=$((failed + 1)); failures+=("$1"); }
finish() {
	local f
	for f in "${failures[@]}"; do echo "failed: $f"; done
	echo "$skipped skipped"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

scripts/install-deps.sh || { echo "dependency installation failed"; failed_one install-deps; finish; }

# setup DIR [meson options...]: configure a build directory, or refresh it.
setup() {
	local dir=$1; shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
}
# count DIR: one pass, skip or fail per test of DIR's last meson test run.
count() {
	local result name
	while read -r result name; do
		case $result in
		OK) passed=$((passed + 1)) ;;
		SKIP) skipped=$((skipped + 1)) ;;
		*) failed_one "$(basename "$1"):$name" ;;
		esac
	done < <(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    print(t["result"], t["name"].replace(" ", "_"))' "$1/meson-logs/testlog.json")
}
# stage NAME: prints and remembers how long each added stage took.
stage_start=$(date +%s)
stage() {
	local now
	now=$(date +%s)
	echo "run-tests: $1 took $((now - stage_start)) s"
	stage_start=$now
}

if ! { setup "$build" && ninja -C "$build"; }; then
	echo "build failed"; failed_one build; finish
fi
# The whole-tree checks (tests/lint) run here only, not again per sanitizer.
meson test -C "$build" --suite unit --suite lint --print-errorlogs
count "$build"
stage "build + unit and lint tests"

# The unit tests again with ASan+UBSan (gcc; any report fails the test), and
# the range-lock and multi-queue tests (scsi, core) with TSan. The ASan
# build's tcmud also serves the VM boot of tests/vm/asan.list below.
# -O1, as ASan's own documentation suggests: its build is a quarter of the
# run, and -O2's compile took 815 s of it against 605 s (2 cores).
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if setup "$build-asan" -Db_sanitize=address,undefined -Doptimization=1 && ninja -C "$build-asan"; then
	LSAN_OPTIONS=suppressions=$PWD/tests/unit/lsan.supp \
		meson test -C "$build-asan" --suite unit --print-errorlogs --timeout-multiplier 3
	count "$build-asan"
else
	echo "ASan build failed"; failed_one asan-build
fi
stage "ASan+UBSan build + unit tests"
if setup "$build-tsan" -Db_sanitize=thread -Dvm_tests=false &&
	ninja -C "$build-tsan" tests/unit/scsi/scsi_unit_tests tests/unit/core/core_test; then
	TSAN_OPTIONS=halt_on_error=1:suppressions=$PWD/tests/unit/tsan.supp meson test -C "$build-tsan" --no-rebuild --print-errorlogs \
		--timeout-multiplier 10 scsi core
	count "$build-tsan"
else
	echo "TSan build failed"; failed_one tsan-build
fi
stage "TSan build + scsi/core tests"

# A short libFuzzer run of every tests/fuzz target (clang), each counted once.
smoke=0
while IFS= read -r line; do
	echo "$line"
	case $line in
	"fuzz-smoke "*": pass"*) passed=$((passed + 1)); smoke=$((smoke + 1)) ;;
	"fuzz-smoke "*) failed_one "$(echo "$line" | cut -d' ' -f1-2 | tr -d :)"; smoke=$((smoke + 1)) ;;
	esac
done < <(scripts/fuzz.sh --smoke --time 15 --build "$build-fuzz" 2>&1)
[ "$smoke" -gt 0 ] || { echo "fuzz smoke did not run"; failed_one fuzz-smoke; }
stage "fuzz smoke"

[ "$vm" = 1 ] || finish

# run_vm_suite LIST [tests/vm/run options...]
run_vm_suite() {
	local list=$1 out scenarios
	out=$build/vm-out/$(basename "$1" .list)
	shift
	mapfile -t scenarios < <(grep -v '^\s*\(#\|$\)' "$list")
	[ ${#scenarios[@]} -gt 0 ] || return 0
	# 600 s per scenario: a hung one still ends, a slow emulated run does not.
	local rc=0
	tests/vm/run --build "$build" --out "$out" --timeout 600 "$@" "${scenarios[@]}" || rc=$?
	# 77: the boot cannot run on this host (no Ceph test bed): its
	# scenarios are skipped, neither passed nor failed.
	if [ $rc = 77 ]; then
		echo "run-tests: $(basename "$list") skipped (exit 77): ${scenarios[*]}"
		skipped=$((skipped + ${#scenarios[@]}))
		return 0
	fi
	local name verdict why
	for name in "${scenarios[@]}"; do
		verdict=$(awk -v n="$name" '$1 == n { print $2 }' "$out/verdict" 2>/dev/null)
		case $verdict in
		pass) passed=$((passed + 1)) ;;
		skip) skipped=$((skipped + 1)) ;;
		*)
			why=$(grep -m1 -o 'FAIL:.*' "$out/$name.log" 2>/dev/null | cut -c1-120)
			failed_one "$(basename "$list" .list)/$name${why:+ ($why)}" ;;
		esac
	done
}

run_vm_suite tests/vm/stock.list
stage "VM stock boot"
# The stock-ring path on Debian 12's default kernel, 6.1 (a subset).
run_vm_suite tests/vm/stock-6.1.list --kernel 6.1
stage "VM 6.1 boot"
# And on the newest 6.12 upload, what the next kernel update brings.
run_vm_suite tests/vm/stock-newest.list --kernel newest
stage "VM newest 6.12 boot"
# The rbd backstore against a one-node Ceph that this boot brings up on the
# host (scripts/ceph-testbed.sh, bluestore: the OSD restarts under I/O keep
# the data); its bring-up times are printed and kept in the run's out dir.
run_vm_suite tests/vm/rbd.list --ceph bluestore
[ -f "$build/vm-out/rbd/ceph-bringup" ] &&
	echo "run-tests: ceph test bed bring-up: $(tr '\n' ' ' < "$build/vm-out/rbd/ceph-bringup")"
stage "VM rbd boot"
# tcmud built with ASan+UBSan in a few tcmud scenarios; the verdict fails
# any scenario whose logs hold a sanitizer report.
ASAN_OPTIONS=detect_leaks=1 run_vm_suite tests/vm/asan.list --build "$build-asan"
stage "VM ASan boot"
if grep -qv '^\s*\(#\|$\)' tests/vm/patched.list; then
	if kmod/build.sh "$build/kmod"; then
		run_vm_suite tests/vm/patched.list --kmod "$build/kmod"
	else
		echo "kmod build failed"
		failed_one kmod-build
	fi
	stage "kmod build + VM patched boot"
fi
# The Debian packages (dpkg-buildpackage + lintian, counted once), then the
# systemd guest that installs them with apt, reboots, and removes them.
if scripts/build-debs.sh "$build/debs"; then
	passed=$((passed + 1))
	# tcmud-dkms installed with apt in an overlay of this machine's root
	# against the pinned kernel (minutes faster than the guest's TCG build).
	# Then against the newest 6.12 upload, with its linux-source, as after
	# a kernel update (the modules rebuilt by DKMS).
	for which in "" --newest; do
		rc=0
		kmod/dkms-check.sh $which "$build/debs" || rc=$?
		case $rc in
		0) passed=$((passed + 1)) ;;
		77) skipped=$((skipped + 1)) ;;
		*) echo "kmod/dkms-check.sh $which failed"; failed_one "dkms-check$which" ;;
		esac
	done
	stage "Debian packages + DKMS checks"
	# apt and targetcli are minutes each under TCG on a loaded machine.
	# The Ceph test bed (memstore: only systemd-tcmud-rbd uses it) where the
	# host can run it; without it that scenario skips, the others run.
	run_vm_suite tests/vm/systemd.list --systemd --ceph-optional memstore --timeout 900
	stage "VM systemd guest"
else
	echo "package build failed"
	failed_one build-debs
fi
# The debug kernel (lockdep, KASAN, might_sleep, list/object debug, UBSAN):
# a cold build (scripts/debug-kernel.sh) does not fit CI's time, so its
# focused list runs only where the build is cached already;
# scripts/debug-suite.sh builds it and runs the full suites on it.
if grep -qv '^\s*\(#\|$\)' tests/vm/debug.list; then
	if ! scripts/debug-kernel.sh --cached > /dev/null 2>&1; then
		echo "debug kernel not cached: tests/vm/debug.list not run (scripts/debug-suite.sh builds it)"
	elif kmod/build.sh --kernel debug "$build/kmod-debug"; then
		# Each checker must still be on, and caught by the verdict.
		if tests/vm/debug-selfcheck.sh --build "$build"; then passed=$((passed + 1)); else failed_one debug-selfcheck; fi
		run_vm_suite tests/vm/debug.list --kernel debug --kmod "$build/kmod-debug"
	else
		echo "kmod build against the debug kernel failed"
		failed_one kmod-debug-build
	fi
fi
finish
