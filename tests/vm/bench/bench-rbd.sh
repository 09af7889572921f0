# SPDX-License-Identifier: GPL-2.0-or-later
# The rbd rows of the benchmark (tests/vm/scenarios/bench-mq.sh with
# BENCH_RBD=1, booted by scripts/bench.sh --rbd with the Ceph test bed on
# the host): one 256 MiB image on the test bed's memstore OSD, prefilled,
# served by Debian's tcmu-runner rbd handler and by tcmud's (librbd's cache
# off for both: tcmu-runner forces it off, tcmud's default), with the same
# workloads and jobs as the file rows; and librbd's own ceiling, `rbd bench`
# at the depth of the 2-job fio runs, once on the host and once in this
# guest (see bench_rbd_ceiling), into rbd-bench.tsv. Sourced after lib.sh,
# ceph-lib.sh and bench-lib.sh.
BENCH_RBD_IMAGE=bench-rbd
BENCH_RBD_SIZE=$((256 << 20))

bench_rbd_enabled() { [ "${BENCH_RBD:-0}" = 1 ]; }

# bench_rbd_ceiling WHERE: `rbd bench` (random, rbd_cache off, io-threads =
# the depth of the 2-job fio runs, the fio workload's io size) for each
# workload, into rbd-bench.tsv (where workload threads ops_per_sec
# cpu_us_per_op). WHERE=host runs it natively on the host (through the
# agent); WHERE=guest runs it in this guest, where librbd pays the same
# emulation cost as the daemons' librbd: the fair ceiling. CPU per op is the
# guest process's utime+stime (bash's `times`), "-" on the host.
bench_rbd_ceiling() {
	local where=$1 w args total threads line out ops cpu
	threads=$((BENCH_IODEPTH * 2))
	for w in $BENCH_WORKLOADS; do
		# The guest's totals keep each run to seconds under TCG.
		case $w in
		randread-4k) args="--io-type read --io-size 4K"; total=128M; [ "$where" = host ] || total=16M ;;
		randwrite-4k) args="--io-type write --io-size 4K"; total=64M; [ "$where" = host ] || total=8M ;;
		randread-128k) args="--io-type read --io-size 128K"; total=1G; [ "$where" = host ] || total=128M ;;
		esac
		cpu=-
		if [ "$where" = host ]; then
			# shellcheck disable=SC2086
			out=$(host_ceph rbd bench --rbd-cache=false --io-pattern rand $args --io-total $total \
				--io-threads $threads "$TCMUD_CEPH_POOL/$BENCH_RBD_IMAGE")
		else
			# shellcheck disable=SC2086
			out=$(bash -c 'rbd bench "$@" && times' rbd-bench --rbd-cache=false --io-pattern rand \
				$args --io-total $total --io-threads $threads "$TCMUD_CEPH_POOL/$BENCH_RBD_IMAGE")
			# `times`' second line: the children's user and system time.
			cpu=$(echo "$out" | tail -1 | python3 -c '
import re, sys
t = sum(int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", sys.stdin.read()))
ops = int(sys.argv[1])
print(round(t * 1e6 / ops, 1) if ops else "-")' $(($(numfmt --from=iec $total) / $(numfmt --from=iec "${args##* }"))))
		fi
		line=$(echo "$out" | grep 'ops/sec:' | tail -1)
		ops=$(echo "$line" | sed 's/.*ops\/sec: *\([0-9.]*\).*/\1/')
		printf '%s\t%s\t%s\t%s\t%s\n' "$where" "$w" "$threads" "${ops:-0}" "$cpu" >> "$BENCH_OUT/rbd-bench.tsv"
		log "rbd bench in the $where, $w x$threads: $line (CPU-us/op $cpu)"
	done
}

# bench_rbd_image: the image, written once end to end (reads of objects
# that do not exist yet would cost the OSD nothing).
bench_rbd_image() {
	rbd_image $BENCH_RBD_IMAGE $((BENCH_RBD_SIZE >> 20))M
	host_ceph rbd bench --io-type write --io-pattern seq --io-size 4M --io-threads 4 \
		--io-total $BENCH_RBD_SIZE "$TCMUD_CEPH_POOL/$BENCH_RBD_IMAGE" >/dev/null ||
		fail "prefilling the rbd image"
}

# bench_rbd_prepare: the image and the ceilings.
bench_rbd_prepare() {
	[ -n "${TCMUD_CEPH_AGENT:-}" ] || fail "BENCH_RBD=1 without the Ceph test bed (bench.sh --rbd)"
	bench_rbd_image
	: > "$BENCH_OUT/rbd-bench.tsv"
	bench_rbd_ceiling host
	bench_rbd_ceiling guest
}

# bench_rbd_device NAME [ATTRS]: the image as a TCMU device, exported
# (through the conf BENCH_RBD_CONF names, if set).
bench_rbd_device() {
	local bs
	bs=$(USER_BACKSTORE_ATTRS="emulate_write_cache=1 ${2:-}" create_user_backstore "$1" rbd \
		"$TCMUD_CEPH_POOL/$BENCH_RBD_IMAGE;conf=${BENCH_RBD_CONF:-$CEPH_CONF}" $BENCH_RBD_SIZE)
	echo "$bs"
}

# A variant of how tcmud serves the image: comma-separated items, no spaces
# inside one. --option: librados/librbd options in tcmud's CEPH_ARGS (what
# tcmud sets itself, rbd_cache and rbd_non_blocking_aio among them, ranks
# above CEPH_ARGS in librados); +key=value: a line under [client] of a copy
# of the conf the device names (which tcmud reads for those two, as an
# administrator's conf); NAME=VALUE: tcmud's environment (GLIBC_TUNABLES=...).
# e.g. "+rbd_non_blocking_aio=true,GLIBC_TUNABLES=glibc.malloc.trim_threshold=67108864"
#
# bench_rbd_variant_env SPEC: the lines for TCMUD_ENV.
bench_rbd_variant_env() {
	local item ceph=""
	local -a items
	IFS=, read -ra items <<< "$1"
	for item in "${items[@]}"; do
		case $item in
		--*) ceph+="${ceph:+ }$item" ;;
		+*) ;;
		*=*) echo "$item" ;;
		*) fail "variant item '$item' is not --option, +key=value or NAME=VALUE" ;;
		esac
	done
	[ -z "$ceph" ] || echo "CEPH_ARGS=$ceph"
}

# bench_rbd_variant_conf SPEC: the conf for the device: $CEPH_CONF, or a
# copy with SPEC's +key=value lines under [client].
bench_rbd_variant_conf() {
	local item conf="" path
	local -a items
	IFS=, read -ra items <<< "$1"
	for item in "${items[@]}"; do
		[[ $item != +* ]] || conf+="${item#+}"$'\n'
	done
	[ -n "$conf" ] || { echo "$CEPH_CONF"; return; }
	path=/tmp/ceph-variant-$(echo "$1" | md5sum | cut -c1-8).conf
	{ cat "$CEPH_CONF"; printf '\n[client]\n%s' "$conf"; } > "$path"
	echo "$path"
}

# bench_rbd_serve DAEMON NAME [ATTRS]: starts DAEMON (tcmu-runner, or
# tcmud: $TCMUD_BIN if set) and serves the image through it as device NAME;
# sets BENCH_RBD_PID and BENCH_RBD_DEV (/dev/sdX, scheduler none). Stop it
# with bench_stop_daemon "$BENCH_RBD_PID".
bench_rbd_serve() {
	local bs
	case $1 in
	tcmu-runner)
		# start_tcmu_runner waits for this run's "registered" line.
		mkdir -p /var/log/tcmu
		: > /var/log/tcmu/tcmu-runner.log
		start_tcmu_runner
		BENCH_RBD_PID=$RUNNER_PID
		;;
	tcmud) start_tcmud; BENCH_RBD_PID=$TCMUD_PID ;;
	*) fail "bench_rbd_serve: no daemon $1" ;;
	esac
	bs=$(bench_rbd_device "$2" "${3:-}")
	wait_uio_open "$BENCH_RBD_PID" 60
	BENCH_RBD_DEV=$(export_via_loop "$bs")
	bench_prepare_disk "$BENCH_RBD_DEV"
}

# Stock modules: tcmu-runner's rbd handler, then tcmud's.
bench_rbd_stock() {
	bench_rbd_enabled || return 0
	bench_rbd_prepare
	bench_rbd_serve tcmu-runner bench-runner-rbd
	bench_run tcmu-runner-rbd "$BENCH_RBD_DEV" "$BENCH_RBD_PID"
	bench_stop_daemon "$BENCH_RBD_PID"
	cp /var/log/tcmu/tcmu-runner.log "$BENCH_OUT/tcmu-runner-rbd.log"
	if ! ldd "$TCMUD_BUILD/daemon/core/tcmud" | grep librbd >/dev/null; then
		log "tcmud built without librbd: no tcmud rbd rows"
		return 0
	fi
	bench_rbd_serve tcmud bench-tcmud-rbd
	bench_run tcmud-rbd "$BENCH_RBD_DEV" "$BENCH_RBD_PID"
	bench_stop_daemon "$BENCH_RBD_PID"
	bench_queue_totals tcmud-rbd bench-tcmud-rbd "$TCMUD_LOG"
}

# Patched modules, tcmud running: one device per queue count in turn.
bench_rbd_patched() {
	local nq bs dev
	bench_rbd_enabled || return 0
	ldd "$TCMUD_BUILD/daemon/core/tcmud" | grep librbd >/dev/null || return 0
	for nq in $BENCH_QUEUES; do
		bs=$(bench_rbd_device "bench-rbd-q$nq" "nr_queues=$nq")
		wait_uio_open "$TCMUD_PID" 60
		dev=$(export_via_loop "$bs")
		bench_prepare_disk "$dev"
		bench_run "tcmud-rbd-${nq}q" "$dev" "$TCMUD_PID"
		remove_all_targets
		bench_queue_totals "tcmud-rbd-${nq}q" "bench-rbd-q$nq" "$TCMUD_LOG"
	done
}
