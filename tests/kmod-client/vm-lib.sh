# SPDX-License-Identifier: GPL-2.0-or-later
# Guest-side helpers for the kmod-* VM scenarios that run tcmu-mq-client.
# Sourced after tests/vm/guest/lib.sh.

MQ_CLIENT=$TCMUD_BUILD/tests/kmod-client/tcmu-mq-client
[ -x "$MQ_CLIENT" ] || fail "no $MQ_CLIENT: build tests/kmod-client (meson) first"
# Client logs go straight to the host's result folder, kept even on failure.
# shellcheck disable=SC2034 # read by the kmod-* scenarios that source this file
LOGS=${TCMUD_VM_OUT:-/tmp}

# create_mq_backstore NAME NR_QUEUES SIZE_BYTES [CMD_TIME_OUT_S]
#   -> prints the backstore's configfs dir. nr_queues must be set before
#   enable; it is read back to prove the patched module took it. An empty
#   NR_QUEUES leaves the attribute alone (the stock module has none).
#   nl_reply_supported=-1: our client does not answer netlink, and once a
#   tcmu-runner earlier in the boot has announced reply support, the kernel
#   would otherwise wait for a reply to the device's ADDED event forever.
#   MQ_BACKSTORE_ATTRS="name=value ..." go to attrib/ before enable,
#   MQ_BACKSTORE_CONTROL="name=value ..." to control (max_data_area_mb).
create_mq_backstore() {
	local dir=$TARGET/core/user_0/$1 attr
	mkdir -p "$dir"
	echo "dev_config=mq/ram" > "$dir/control"
	echo "dev_size=$3" > "$dir/control"
	echo "nl_reply_supported=-1" > "$dir/control"
	echo "$1-serial" > "$dir/wwn/vpd_unit_serial"
	[ -z "$2" ] || echo "$2" > "$dir/attrib/nr_queues"
	[ -z "${4:-}" ] || echo "$4" > "$dir/attrib/cmd_time_out"
	for attr in ${MQ_BACKSTORE_CONTROL:-}; do
		echo "$attr" > "$dir/control"
	done
	for attr in ${MQ_BACKSTORE_ATTRS:-}; do
		echo "${attr#*=}" > "$dir/attrib/${attr%%=*}"
	done
	echo 1 > "$dir/enable"
	[ -z "$2" ] || expect_eq "$(cat "$dir/attrib/nr_queues")" "$2" "$1 attrib/nr_queues"
	echo "$dir"
}

# start_client NAME SIZE LOG [ARGS...]: starts tcmu-mq-client on the device
# and waits for its "ready" line; sets CLIENT_PID.
start_client() {
	local name=$1 size=$2 logf=$3
	shift 3
	"$MQ_CLIENT" --name "$name" --size "$size" "$@" > "$logf" 2>&1 &
	CLIENT_PID=$!
	stop_on_exit "$CLIENT_PID"
	for _ in $(seq 100); do
		grep -q '^ready ' "$logf" && { log "client: $(grep '^ready ' "$logf")"; return 0; }
		kill -0 "$CLIENT_PID" 2>/dev/null || { cat "$logf"; fail "client for $name died"; }
		sleep 0.1
	done
	cat "$logf"
	fail "client for $name not ready"
}

# client_state PID LOG: the client's per-queue counters and ring positions.
client_state() {
	kill -USR1 "$1" 2>/dev/null || { echo "client $1 is gone"; return 0; }
	sleep 1
	grep '^stats' "$2" | tail -n 20
}

# export_served BS PID LOG: export_via_loop, with the client's state in the
# log if no disk appears (the SCSI scan waits on commands the client serves).
export_served() {
	(export_via_loop "$1") || { client_state "$2" "$3"; fail "no disk for $1"; }
}

# wait_client PID LOG: waits (at most 60 s) for a client that should stop by
# itself (its device was removed) and requires a clean exit.
wait_client() {
	local pid=$1 logf=$2 rc=0
	for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; fail "client $pid did not stop after its device went away"; }
	wait "$pid" || rc=$?
	grep -E '^(final|exit)' "$logf" | sed 's/^/  /'
	expect_eq "$rc" 0 "client exit status ($(tail -n1 "$logf"))"
}

# stop_client PID LOG: SIGTERM, then the same checks as wait_client.
stop_client() {
	kill -TERM "$1" 2>/dev/null || true
	wait_client "$1" "$2"
}

# check_queues_used LOG NR_QUEUES: commands are steered to queue
# (submitting CPU % NR_QUEUES), so every queue below the CPU count must have
# got commands and every queue at or above it none; and each queue's
# received count equals its completed count (no command lost or completed
# twice, as far as user space can see).
check_queues_used() {
	local logf=$1 n=$2 q line rx completed cpus
	cpus=$(nproc)
	for ((q = 0; q < n; q++)); do
		line=$(grep "^final queue $q:" "$logf") || fail "no final counts for queue $q"
		rx=$(sed -n 's/.* received=\([0-9]*\).*/\1/p' <<<"$line")
		completed=$(sed -n 's/.* completed=\([0-9]*\).*/\1/p' <<<"$line")
		if [ "$q" -lt "$cpus" ]; then
			[ "$rx" -gt 0 ] || fail "queue $q got no commands: $line"
		else
			expect_eq "$rx" 0 "commands on queue $q, which no CPU maps to ($cpus CPUs)"
			# Each queue has its own uio device: the busy queues'
			# entries never woke this one.
			expect_eq "$(sed -n 's/.* wakeups=\([0-9]*\).*/\1/p' <<<"$line")" 0 \
				"wakeups of queue $q, which no CPU maps to"
		fi
		expect_eq "$completed" "$rx" "queue $q completed vs received"
	done
}

# The kernel's own voice on a ring user space broke, or a lost completion
# (the command timed out): none of it may appear in a passing run.
kernel_ring_errors() {
	dmesg | sed -n "/tcmud-vm: scenario ${1} start/,\$p" |
		grep -E 'ring is broken|not found, ring|Invalid addr to data page|tcmu.*(timed out|BUG)' || true
}

# queue_uios HBA NAME: the uio devices of the queues 1..N-1 of backstore
# NAME (named tcmu-queue/<hba>/<name>/<q>), one "uioM q" line each.
queue_uios() {
	local d
	for d in /sys/class/uio/uio*; do
		[ -e "$d/name" ] || continue
		case $(cat "$d/name") in
		"tcmu-queue/$1/$2/"*) echo "${d##*/} $(cut -d/ -f4 "$d/name")" ;;
		esac
	done
}

# fio_verify_jobs NAME DEV JOBS TOTAL_MIB: crc32c write+verify with JOBS jobs
# on disjoint ranges, pinned one per CPU in turn (split policy), so that
# commands come from every CPU and so reach every queue.
fio_verify_jobs() {
	local name=$1 dev=$2 jobs=$3 per_job=$(($4 / $3))M
	log "$name: fio crc32c write+verify, $jobs jobs x $per_job on $dev"
	fio_checked "$name: write+verify" "$(($4 / $3 * $3))M" --name="$name" --filename="$dev" \
		--direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bsrange=4k-64k \
		--numjobs="$jobs" --size="$per_job" --offset_increment="$per_job" \
		--cpus_allowed="0-$(($(nproc) - 1))" --cpus_allowed_policy=split \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --group_reporting
	log "$name: fio write+verify passed"
}
