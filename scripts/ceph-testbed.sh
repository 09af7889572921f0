#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A throwaway one-node Ceph for tests and benchmarks: one mon, one OSD (no
# mgr: I/O, locking and blocklisting work without one), cephx on, pool
# "rbd" of size 1 with the named images, all of it in a network namespace of
# its own on a veth pair. Mon and OSD bind to the namespace's address, which
# host clients and a QEMU guest with plain `-netdev user` networking both
# reach unchanged: Ceph refuses a connection whose dialled address is not the
# daemon's own, so port forwarding or NAT towards loopback cannot work.
#
#   scripts/ceph-testbed.sh [options] up       bring it up (timings on stdout)
#   scripts/ceph-testbed.sh [options] down     stop every daemon by pid, delete the namespace and DIR
#   scripts/ceph-testbed.sh [options] env      KEY=value lines for clients (eval-able)
#   scripts/ceph-testbed.sh [options] stop [osd|mon|all]    stop daemons, keep the data
#   scripts/ceph-testbed.sh [options] start [osd|mon|all]   start them again on that data
#   scripts/ceph-testbed.sh [options] status   which daemons run
#
# Options (each also read from the environment variable in brackets):
#   --dir DIR         everything lives here (TCMUD_CEPH_DIR, /var/tmp/tcmud-ceph)
#   --netns NAME      the namespace (TCMUD_CEPH_NETNS, tcmud-ceph)
#   --subnet A.B.C    a /24: the host side is A.B.C.1, the cluster A.B.C.2
#                     (TCMUD_CEPH_SUBNET, 10.213.0)
#   --store S         memstore (fast, in RAM, lost when the OSD stops) or
#                     bluestore (a sparse file DIR/osd.0/block, survives an
#                     OSD restart) (TCMUD_CEPH_STORE, memstore)
#   --image NAME[:SIZE]  an image to create in the pool, repeatable
#                     (TCMUD_CEPH_IMAGES, space-separated; default disk0:1G)
#   --pool NAME       (TCMUD_CEPH_POOL, rbd)
#   --timeout S       bound of every wait (TCMUD_CEPH_TIMEOUT, 120)
#   --mgr             also a mgr (TCMUD_CEPH_MGR=1): the service map (`ceph
#                     service dump`), where gateways register; needs
#                     ceph-mgr, skipped (77) without it
# Parallel runs need their own --dir, --netns and --subnet.
#
# Clients need only the conf (it names the keyring): CEPH_CONF=DIR/ceph.conf.
# Users: client.admin, and client.tcmud with the caps docs/rbd.md asks of a
# gateway: "profile rbd" (exclusive-lock breaks and blocklisting included)
# and the mon command "osd blocklist" (removing its own stale entries).
# Exit status 77, with the reason, where the ceph binaries or network
# namespaces are missing; needs root.
set -euo pipefail

dir=${TCMUD_CEPH_DIR:-/var/tmp/tcmud-ceph}
netns=${TCMUD_CEPH_NETNS:-tcmud-ceph}
subnet=${TCMUD_CEPH_SUBNET:-10.213.0}
store=${TCMUD_CEPH_STORE:-memstore}
pool=${TCMUD_CEPH_POOL:-rbd}
wait_s=${TCMUD_CEPH_TIMEOUT:-120}
read -r -a images <<< "${TCMUD_CEPH_IMAGES:-}"
mgr=${TCMUD_CEPH_MGR:-0}
cli_images=()
action=""
while [ $# -gt 0 ]; do
	case $1 in
	--dir) dir=$2; shift 2 ;;
	--netns) netns=$2; shift 2 ;;
	--subnet) subnet=$2; shift 2 ;;
	--store) store=$2; shift 2 ;;
	--image) cli_images+=("$2"); shift 2 ;;
	--pool) pool=$2; shift 2 ;;
	--timeout) wait_s=$2; shift 2 ;;
	--mgr) mgr=1; shift ;;
	-h|--help) sed -n '2,35p' "$0"; exit 0 ;;
	up|down|env|status) action=$1; shift ;;
	stop|start) action=$1; which=${2:-all}; shift; [ $# -gt 0 ] && shift ;;
	*) echo "ceph-testbed: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$action" ] || { sed -n '2,35p' "$0" >&2; exit 2; }
[ ${#cli_images[@]} -eq 0 ] || images=("${cli_images[@]}")
[ ${#images[@]} -gt 0 ] || images=(disk0:1G)
case $store in memstore|bluestore) ;; *)
	# ceph-osd takes an unknown osd_objectstore for bluestore, silently.
	echo "ceph-testbed: --store is memstore or bluestore" >&2; exit 2 ;;
esac
[[ $subnet =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "ceph-testbed: --subnet is A.B.C" >&2; exit 2; }
skip() { echo "ceph-testbed: SKIP: $*" >&2; exit 77; }
if [ "$action" = up ]; then
	missing=()
	for tool in ceph ceph-mon ceph-osd ceph-authtool monmaptool rbd ip python3 realpath; do
		command -v "$tool" >/dev/null || missing+=("$tool")
	done
	[ ${#missing[@]} -eq 0 ] ||
		skip "missing ${missing[*]} (apt-get install ceph-mon ceph-osd ceph-common iproute2)"
	[ "$(id -u)" = 0 ] || skip "network namespaces need root"
	[ "$mgr" = 0 ] || command -v ceph-mgr > /dev/null || skip "--mgr: no ceph-mgr (apt-get install ceph-mgr)"
fi
dir=$(realpath -m "$dir")
conf=$dir/ceph.conf
mon_ip=$subnet.2
host_ip=$subnet.1
mon_addr="[v2:$mon_ip:3300,v1:$mon_ip:6789]"
# Interface names are at most 15 characters; the namespace side can be short.
host_if=tc-$(printf '%s' "$netns" | cksum | cut -c1-8)h

t0=$(date +%s%N)
elapsed() { awk -v n="$(date +%s%N)" -v s="$1" 'BEGIN { printf "%.2f", (n - s) / 1e9 }'; }
say() { echo "ceph-testbed: [$(elapsed "$t0") s] $*"; }
die() { echo "ceph-testbed: $*" >&2; exit 1; }

# The ceph CLI waits for ever for a mon it cannot reach: bound every call.
ceph_cli() { timeout "$wait_s" ceph -c "$conf" --connect-timeout "$wait_s" "$@"; }
in_ns() { ip netns exec "$netns" "$@"; }
netns_exists() { ip netns list 2>/dev/null | awk -v n="$netns" '$1 == n { f = 1 } END { exit !f }'; }

# alive PID: running and not a zombie (kill -0 succeeds on a zombie that
# the reaper has not collected yet).
alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# stop_daemon NAME: SIGTERM the pid in DIR/run/NAME.pid if it still is that
# daemon, wait for it, SIGKILL after the bound.
stop_daemon() {
	local f=$dir/run/$1.pid pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if [[ $pid =~ ^[0-9]+$ ]] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "ceph-${1%%.*} "; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq $((wait_s * 10))); do alive "$pid" || break; sleep 0.1; done
		if alive "$pid"; then
			echo "ceph-testbed: $1 (pid $pid) ignored SIGTERM: SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
			for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
		fi
	fi
	rm -f "$f"
}

running() {
	local f=$dir/run/$1.pid pid
	[ -f "$f" ] && pid=$(cat "$f") && [[ $pid =~ ^[0-9]+$ ]] && alive "$pid"
}

start_daemon() {
	# Each daemon forks, detaches and writes DIR/run/<name>.pid itself.
	in_ns nice -n 10 "ceph-$1" -c "$conf" -i "$2" 2>>"$dir/log/daemon-stderr.log" ||
		die "ceph-$1 -i $2 did not start: $(tail -3 "$dir/log/daemon-stderr.log")"
}

wait_osd_up() {
	local n=0
	for _ in $(seq $((wait_s * 5))); do
		n=$(ceph_cli osd stat -f json 2>/dev/null |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["num_up_osds"])' 2>/dev/null) || n=0
		[ "$n" = 1 ] && return 0
		running osd.0 || die "osd.0 exited (see $dir/log/osd.0.log)"
		sleep 0.2
	done
	die "osd.0 not up after ${wait_s} s (see $dir/log/osd.0.log)"
}

do_down() {
	local pid
	stop_daemon mgr.x
	stop_daemon osd.0
	stop_daemon mon.a
	if netns_exists; then
		# Whatever else still runs in the namespace is ours: it exists only
		# for this cluster.
		for pid in $(ip netns pids "$netns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
		ip netns del "$netns"
	fi
	ip link del "$host_if" 2>/dev/null || true
	rm -rf "$dir"
	say "down"
}

write_conf() {
	local fsid=$1
	cat > "$conf" <<EOF
[global]
fsid = $fsid
mon host = $mon_addr
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
mon warn on insecure global id reclaim allowed = false
ms bind ipv6 = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
# The disk may be less than 30 % free on a shared machine; never let that
# become HEALTH_ERR or a mon shutdown.
mon data avail warn = 2
mon data avail crit = 1
# One mon: commit map changes after 0.1 s, not 1 s (bring-up 3 s, not 9 s).
paxos propose interval = 0.1
paxos min wait = 0.01
client mount timeout = 30
rados mon op timeout = 30

[mon]
mon data = $dir/\$name
public addr = $mon_ip
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
# No mgr: without this the mon reports MGR_DOWN 120 s after mkfs.
mon mgr mkfs grace = 315360000
# A stopped OSD stays "in": its PGs wait for it rather than going nowhere.
mon osd down out interval = 0
mon warn on osd down out interval zero = false

[osd]
osd data = $dir/\$name
osd objectstore = $store
public addr = $mon_ip
cluster addr = $mon_ip
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
# memstore's defaults cost ~1.4 GB of RSS for 64 MB of random 4K writes;
# 4K page sets and short PG logs ~220 MB (and 3x the write IOPS).
memstore device bytes = 2147483648
memstore page set = true
memstore page size = 4096
osd min pg log entries = 100
osd max pg log entries = 200
osd pg log trim min = 10
osd target pg log entries per osd = 2000
# bluestore on a sparse file; "bluestore block path" left unset (set to
# the default it makes mkfs create a symlink to itself).
bluestore block create = true
bluestore block size = 4294967296
bluestore fsck on mount = false
osd memory target = 1073741824

[mgr]
mgr data = $dir/\$name
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
keyring = $dir/\$name/keyring
# Only the modules that cannot be turned off: the service map is the
# mgr's own, no module serves it.
mgr initial modules =

[client]
keyring = $dir/keyring
# Clients (host and guest, several at once) neither log nor open sockets.
log file = /dev/null
admin socket =
EOF
}

do_up() {
	local fsid osd_uuid osd_secret osd_id spec name size t
	if running mon.a || running osd.0; then
		die "a cluster runs from $dir already (run: $0 --dir $dir down)"
	fi
	if netns_exists; then
		die "namespace $netns exists (another run? $0 --netns $netns down removes it)"
	fi
	if ip -4 route show "$subnet.0/24" 2>/dev/null | grep -q .; then
		die "$subnet.0/24 is routed here already: pick another --subnet"
	fi
	ip netns add "$netns" 2>/dev/null || skip "cannot create network namespace $netns (no CONFIG_NET_NS or CAP_SYS_ADMIN)"
	# From here on, a failure leaves nothing behind but DIR's logs.
	# shellcheck disable=SC2154 # rc is assigned by the trap's own text
	trap 'rc=$?; if [ $rc -ne 0 ]; then echo "ceph-testbed: up failed; stopping what started (logs: $dir/log)" >&2
		cp -r "$dir/log" "$dir.failed-log" 2>/dev/null || true; do_down >&2; fi' EXIT
	ip link add "$host_if" type veth peer name veth0 netns "$netns" 2>/dev/null ||
		skip "cannot create a veth pair (no CONFIG_VETH)"
	ip addr add "$host_ip/24" dev "$host_if"
	ip link set "$host_if" up
	in_ns ip link set lo up
	in_ns ip addr add "$mon_ip/24" dev veth0
	in_ns ip link set veth0 up
	say "namespace $netns: host $host_ip ($host_if) <-> cluster $mon_ip"

	rm -rf "$dir" "$dir.failed-log"
	mkdir -p "$dir"/{run,log}
	fsid=$(cat /proc/sys/kernel/random/uuid)
	write_conf "$fsid"
	ceph-authtool --create-keyring "$dir/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
	ceph-authtool --create-keyring "$dir/keyring" --gen-key -n client.admin \
		--cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
	ceph-authtool "$dir/keyring" --gen-key -n client.tcmud \
		--cap mon 'profile rbd, allow command "osd blocklist"' \
		--cap osd "profile rbd pool=$pool" >/dev/null
	ceph-authtool "$dir/mon.keyring" --import-keyring "$dir/keyring" >/dev/null
	monmaptool --create --fsid "$fsid" --addv a "$mon_addr" "$dir/monmap" >/dev/null
	ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/mon.keyring" \
		>"$dir/log/mon-mkfs.out" 2>&1 || die "mon mkfs: $(tail -3 "$dir/log/mon-mkfs.out")"
	start_daemon mon a
	ceph_cli mon stat >/dev/null || die "mon not answering (see $dir/log/mon.a.log)"
	t=$(elapsed "$t0"); echo "mon_s=$t" > "$dir/bringup"
	say "mon up at $mon_addr"

	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	osd_secret=$(ceph-authtool --gen-print-key)
	osd_id=$(echo "{\"cephx_secret\": \"$osd_secret\"}" | ceph_cli osd new "$osd_uuid" -i -)
	[ "$osd_id" = 0 ] || die "expected osd id 0, got '$osd_id'"
	mkdir -p "$dir/osd.0"
	ceph-authtool --create-keyring "$dir/osd.0/keyring" --name osd.0 --add-key "$osd_secret" >/dev/null
	ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >"$dir/log/osd-mkfs.out" 2>&1 ||
		die "osd mkfs ($store): $(tail -3 "$dir/log/osd-mkfs.out")"
	start_daemon osd 0
	wait_osd_up
	t=$(elapsed "$t0"); echo "osd_s=$t" >> "$dir/bringup"
	say "osd.0 up ($store)"

	if [ "$mgr" = 1 ]; then
		mkdir -p "$dir/mgr.x"
		ceph_cli auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' \
			-o "$dir/mgr.x/keyring" >/dev/null || die "mgr.x keyring"
		start_daemon mgr x
		for _ in $(seq $((wait_s * 5))); do
			ceph_cli mgr stat -f json 2>/dev/null | grep -q '"available": *true' && break
			running mgr.x || die "mgr.x exited (see $dir/log/mgr.x.log)"
			sleep 0.2
		done
		ceph_cli mgr stat -f json | grep -q '"available": *true' || die "mgr.x not available"
		t=$(elapsed "$t0"); echo "mgr_s=$t" >> "$dir/bringup"
		say "mgr.x up"
	fi
	ceph_cli osd pool create "$pool" 8 8 >/dev/null 2>&1 || die "pool create $pool failed"
	timeout "$wait_s" rbd -c "$conf" pool init "$pool"
	for spec in "${images[@]}"; do
		name=${spec%%:*} size=1G
		[ "$name" = "$spec" ] || size=${spec#*:}
		timeout "$wait_s" rbd -c "$conf" create --size "$size" "$pool/$name"
		say "image $pool/$name ($size)"
	done
	t=$(elapsed "$t0"); echo "total_s=$t" >> "$dir/bringup"
	write_env
	trap - EXIT
	say "ready: CEPH_CONF=$conf (mon $mon_addr; $(tr '\n' ' ' < "$dir/bringup"))"
}

do_env() {
	[ -f "$dir/env" ] || die "no cluster in $dir (run up first)"
	cat "$dir/env"
}

# What clients need, as the cluster was made (env prints it).
write_env() {
	cat > "$dir/env" <<EOF
CEPH_CONF=$conf
TCMUD_CEPH_DIR=$dir
TCMUD_CEPH_KEYRING=$dir/keyring
TCMUD_CEPH_MON_HOST=$mon_addr
TCMUD_CEPH_MON_IP=$mon_ip
TCMUD_CEPH_HOST_IP=$host_ip
TCMUD_CEPH_NETNS=$netns
TCMUD_CEPH_STORE=$store
TCMUD_CEPH_POOL=$pool
TCMUD_CEPH_IMAGES="${images[*]%%:*}"
EOF
}

do_stop() {
	case $which in
	osd) stop_daemon osd.0 ;;
	mon) stop_daemon mon.a ;;
	all) stop_daemon osd.0; stop_daemon mon.a ;;
	*) die "stop osd|mon|all" ;;
	esac
	say "stopped $which"
}

do_start() {
	[ -f "$conf" ] || die "no cluster in $dir"
	case $which in
	osd|mon|all) ;;
	*) die "start osd|mon|all" ;;
	esac
	if [ "$which" != osd ] && ! running mon.a; then
		start_daemon mon a
		ceph_cli mon stat >/dev/null || die "mon not answering"
	fi
	if [ "$which" != mon ] && ! running osd.0; then
		grep -q "^osd objectstore = bluestore" "$conf" ||
			echo "ceph-testbed: warning: a memstore OSD starts empty" >&2
		start_daemon osd 0
		wait_osd_up
	fi
	say "started $which"
}

case $action in
up) do_up ;;
down) do_down ;;
env) do_env ;;
stop) do_stop ;;
start) do_start ;;
status)
	for d in mon.a osd.0; do
		if running $d; then echo "$d running (pid $(cat "$dir/run/$d.pid"))"; else echo "$d stopped"; fi
	done
	;;
esac
