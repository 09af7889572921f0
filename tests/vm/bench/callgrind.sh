# SPDX-License-Identifier: GPL-2.0-or-later
# Instructions per command for each daemon, from valgrind's callgrind: each
# LABEL in turn is started under callgrind serving IMG through tcm_loop for
# a fixed number of 4k random reads (callgrind_run in bench-lib.sh). Run by
# bench-mq.sh in the same boot, after the timed runs of the same modules;
# no two daemons run together.
#   bash callgrind.sh IMG SIZE_BYTES LABEL...
# LABEL: tcmu-runner, tcmud, or tcmud-<N>q (tcmud on a device with
# nr_queues=N: the patched modules only).
#
# The backstore is created before the daemon starts and with
# nl_reply_supported=-1. Once a daemon has told the kernel it answers netlink
# commands, enabling a device waits (uninterruptibly, forever) for an answer
# to ADDED_DEVICE even when nobody listens yet ("the listener may not be up
# yet"); a daemon slowed ~1000x by valgrind under TCG is exactly that case,
# and two tries hung the guest in that write. With -1 the kernel does not
# wait for this device; the daemon takes it over when it starts.
# Verified: the 2026-11-30 runs in bench-results/ got their counts this way.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-lib.sh"
img=$1 size=$2
# shellcheck disable=SC2154 # daemons_to_stop comes from lib.sh

# On failure: the daemon first, so no netlink removal waits on it.
callgrind_cleanup() {
	local rc=$? pid
	for pid in "${daemons_to_stop[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
	exit $rc
}
trap callgrind_cleanup EXIT

# instrument_when_up PID SECONDS: valgrind answers callgrind_control once
# it has started the program; switch instrumentation on then.
instrument_when_up() {
	for _ in $(seq "$2"); do
		callgrind_control -i on "$1" 2>&1 | grep -q OK && return 0
		kill -0 "$1" 2>/dev/null || fail "valgrind $1 exited"
		sleep 1
	done
	fail "valgrind $1 did not answer callgrind_control within $2 s"
}

# measure_under_callgrind TARGET NR_QUEUES SUBTYPE CFGSTRING CMD...
# (an empty NR_QUEUES leaves the attribute alone: the stock module has none)
measure_under_callgrind() {
	local target=$1 nq=$2 subtype=$3 cfg=$4 bs dev pid
	shift 4
	bs=$TARGET/core/user_0/cg-$target
	mkdir -p "$bs"
	echo "dev_config=$subtype/$cfg" > "$bs/control"
	echo "dev_size=$size" > "$bs/control"
	echo "nl_reply_supported=-1" > "$bs/control"
	echo "cg-$target-serial" > "$bs/wwn/vpd_unit_serial"
	echo 1 > "$bs/attrib/emulate_write_cache"
	[ -z "$nq" ] || echo "$nq" > "$bs/attrib/nr_queues"
	echo 1 > "$bs/enable"
	start_under_callgrind "$target" "$@"
	pid=$CALLGRIND_PID
	instrument_when_up "$pid" 90
	wait_uio_open "$pid" 90
	log "$target under callgrind holds the device"
	dev=$(export_via_loop "$bs")
	echo none > "/sys/block/$(basename "$dev")/queue/scheduler" 2>/dev/null || true
	callgrind_run "$target" "$pid" "$dev"
	bench_stop_daemon "$pid"
}

shift 2
for label in "$@"; do
	case $label in
	tcmu-runner) measure_under_callgrind "$label" "" qcow "$img" tcmu-runner -l /var/log/tcmu ;;
	tcmud) measure_under_callgrind "$label" "" file "$img" "$TCMUD_BUILD/daemon/core/tcmud" --log-level info ;;
	tcmud-*q) nq=${label#tcmud-}
		measure_under_callgrind "$label" "${nq%q}" file "$img" \
			"$TCMUD_BUILD/daemon/core/tcmud" --log-level info ;;
	*) fail "callgrind: unknown label $label" ;;
	esac
done
