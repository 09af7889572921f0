# Instructions per command for each daemon, from valgrind's callgrind:
# tcmud, then tcmu-runner, each started under callgrind (instrumentation off
# until it is up), serving IMG through tcm_loop for a fixed number of 4k
# random reads (callgrind_run in bench-lib.sh). Run by bench-stock.sh in the
# same boot, after the timed runs; the two daemons never run together.
#   bash callgrind.sh IMG SIZE_BYTES
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-lib.sh"
img=$1 size=$2
: > /tmp/bench-callgrind.pids

# instrument_when_up PID SECONDS: valgrind answers callgrind_control once
# it has started the program; switch instrumentation on then.
instrument_when_up() {
	for _ in $(seq "$2"); do
		callgrind_control -i on "$1" >/dev/null 2>&1 && return 0
		kill -0 "$1" 2>/dev/null || fail "valgrind $1 exited"
		sleep 1
	done
	fail "valgrind $1 did not answer callgrind_control within $2 s"
}

# serve_and_count TARGET PID SUBTYPE CFGSTRING
serve_and_count() {
	local bs dev
	bs=$(create_user_backstore "cg-$1" "$3" "$4" "$size")
	wait_uio_open "$2" 120
	dev=$(export_via_loop "$bs")
	echo none > "/sys/block/$(basename "$dev")/queue/scheduler" 2>/dev/null || true
	callgrind_run "$1" "$2" "$dev"
	bench_stop_daemon "$2"
}

start_under_callgrind tcmud "$TCMUD_BUILD/daemon/core/tcmud" --log-level warn
echo "$CALLGRIND_PID" >> /tmp/bench-callgrind.pids
instrument_when_up "$CALLGRIND_PID" 120
serve_and_count tcmud "$CALLGRIND_PID" file "$img"

start_under_callgrind tcmu-runner tcmu-runner -l /var/log/tcmu
echo "$CALLGRIND_PID" >> /tmp/bench-callgrind.pids
instrument_when_up "$CALLGRIND_PID" 120
serve_and_count tcmu-runner "$CALLGRIND_PID" qcow "$img"
