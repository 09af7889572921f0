# Instructions per command for each daemon, from valgrind's callgrind:
# tcmud, then tcmu-runner, each started under callgrind serving IMG through
# tcm_loop for a fixed number of 4k random reads (callgrind_run in
# bench-lib.sh). Run by bench-stock.sh in the same boot, after the timed
# runs; the two daemons never run together.
#   bash callgrind.sh IMG SIZE_BYTES
#
# The backstore is created before the daemon starts and with
# nl_reply_supported=-1. Once a daemon has told the kernel it answers netlink
# commands, enabling a device waits (uninterruptibly, forever) for an answer
# to ADDED_DEVICE even when nobody listens yet ("the listener may not be up
# yet"); a daemon slowed ~1000x by valgrind under TCG is exactly that case,
# and two tries hung the guest in that write. With -1 the kernel does not
# wait for this device; the daemon takes it over when it starts.
# NOT YET VERIFIED in a VM run (see docs/benchmarks.md).
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

# measure_under_callgrind TARGET SUBTYPE CFGSTRING CMD...
measure_under_callgrind() {
	local target=$1 subtype=$2 cfg=$3 bs dev pid
	shift 3
	bs=$TARGET/core/user_0/cg-$target
	mkdir -p "$bs"
	echo "dev_config=$subtype/$cfg" > "$bs/control"
	echo "dev_size=$size" > "$bs/control"
	echo "nl_reply_supported=-1" > "$bs/control"
	echo "cg-$target-serial" > "$bs/wwn/vpd_unit_serial"
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

measure_under_callgrind tcmud file "$img" "$TCMUD_BUILD/daemon/core/tcmud" --log-level info
measure_under_callgrind tcmu-runner qcow "$img" tcmu-runner -l /var/log/tcmu
