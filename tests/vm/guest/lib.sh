# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for VM scenarios, sourced by tests/vm/scenarios/*.sh inside the
# guest. They drive LIO through configfs directly (targetcli is 30-45 s per
# command under TCG) and leave no target behind when the scenario exits, so
# the next scenario in the same boot starts from a clean slate.
set -euo pipefail
# A failing command inside $(...) fails the scenario too, not just its subshell.
shopt -s inherit_errexit
# A command that ends a scenario through errexit says which one it was.
# (Only under errexit: inside a scenario's "set +e" a failure is expected.)
# shellcheck disable=SC2154 # lib_err is assigned by the trap's own text
trap 'lib_err=$?; [[ $- != *e* ]] || echo "FAIL: line $LINENO: \"$BASH_COMMAND\" exited $lib_err" >&2' ERR

CONFIGFS=/sys/kernel/config
TARGET=$CONFIGFS/target
: "${TCMUD_SRC:?}" "${TCMUD_BUILD:?}"

log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# skip WHY: this scenario cannot run where it was started (no patched
# modules, too few vCPUs); the verdict reports exit 77 as SKIP.
skip() { echo "SKIP: $*"; exit 77; }
# count_matches GLOB...: how many of the expanded names exist (an
# unmatched glob stays literal and counts 0).
count_matches() {
	local f n=0
	for f in "$@"; do [ -e "$f" ] && n=$((n + 1)); done
	echo "$n"
}
expect_eq() { [ "$1" = "$2" ] || fail "${3:-value}: expected '$2', got '$1'"; }
expect_match() { [[ $1 =~ $2 ]] || fail "${3:-value}: '$1' does not match /$2/"; }
# scaled N: N times TCMUD_TIME_SCALE (3 under the debug kernel, whose KASAN
# and lockdep slow the guest down), for a wait's bound — never a check's.
scaled() { echo $(( $1 * ${TCMUD_TIME_SCALE:-1} )); }

# Loads configfs, LIO core, TCMU (ours when TCMUD_KMOD names a directory
# with uio.ko and target_core_user.ko), tcm_loop, fileio and the SCSI
# upper drivers. Safe to call more than once per boot.
load_target_stack() {
	modprobe configfs
	mountpoint -q $CONFIGFS || mount -t configfs configfs $CONFIGFS
	modprobe target_core_mod
	# rtslib's save location on Debian; must be set before any device exists.
	[ -d /etc/rtslib-fb-target ] || mkdir -p /etc/rtslib-fb-target
	echo /etc/rtslib-fb-target > $TARGET/dbroot 2>/dev/null || true
	if [ -n "${TCMUD_KMOD:-}" ]; then
		lsmod | grep -q '^uio ' || insmod "$TCMUD_KMOD/uio.ko"
		lsmod | grep -q '^target_core_user ' || insmod "$TCMUD_KMOD/target_core_user.ko"
	else
		modprobe target_core_user
	fi
	modprobe tcm_loop
	modprobe target_core_file
	modprobe sd_mod
	modprobe sg
}

# mark_kmsg NAME: writes a unique line to the kernel log; klog then prints
# the log from that line on (this scenario's kernel messages only).
mark_kmsg() {
	KMSG_MARK="$1 $(date +%s%N)"
	echo "$KMSG_MARK" > /dev/kmsg
}
klog() { dmesg | sed -n "/$KMSG_MARK/,\$p"; }

# create_fileio_backstore NAME FILE SIZE_BYTES [CONTROL] -> prints the
# backstore's configfs dir; CONTROL (",fd_buffered_io=1") is appended to
# the control string
create_fileio_backstore() {
	local dir=$TARGET/core/fileio_0/$1
	mkdir -p "$dir"
	echo "fd_dev_name=$2,fd_dev_size=$3${4:-}" > "$dir/control"
	echo "$1-serial" > "$dir/wwn/vpd_unit_serial"
	echo 1 > "$dir/enable"
	echo "$dir"
}

# create_user_backstore NAME SUBTYPE CFGSTRING SIZE_BYTES [SERIAL]
#   -> prints the backstore's configfs dir (a TCMU device: /dev/uioN appears)
# USER_BACKSTORE_ATTRS="name=value ..." are written to attrib/ before the
# device is enabled (some, like nr_queues, can only be set then; others,
# like emulate_write_cache, would otherwise go to the daemon as a RECONFIG).
# USER_BACKSTORE_CONTROL="name=value ..." go to control before enabling too
# (max_data_area_mb, data_pages_per_blk, ...).
# USER_BACKSTORE_HBA (default user_0) names the HBA directory: rtslib removes
# the HBA of a backstore targetcli deletes, so a device sharing it would
# make that delete fail.
create_user_backstore() {
	local dir=$TARGET/core/${USER_BACKSTORE_HBA:-user_0}/$1 attr
	mkdir -p "$dir"
	echo "dev_config=$2/$3" > "$dir/control"
	echo "dev_size=$4" > "$dir/control"
	for attr in ${USER_BACKSTORE_CONTROL:-}; do
		echo "$attr" > "$dir/control"
	done
	echo "${5:-$1-serial}" > "$dir/wwn/vpd_unit_serial"
	for attr in ${USER_BACKSTORE_ATTRS:-}; do
		echo "${attr#*=}" > "$dir/attrib/${attr%%=*}"
	done
	enable_user_backstore "$dir" || return 1
	echo "$dir"
}

# enable_user_backstore DIR: a starting tcmu-runner holds block_netlink
# while it takes over existing devices, and an enable then fails with
# EAGAIN (seen once 1 s after its start, on a host at load 10): that, and
# only that, is tried again for up to 10 s, saying so on stderr. Any other
# refusal (the handler said no) fails at once, with the kernel's message.
enable_user_backstore() {
	local try err
	for try in 1 2 3 4 5 6 7 8 9 10; do
		err=$({ echo 1 > "$1/enable"; } 2>&1) && return 0
		case $err in
		*"temporarily unavailable"*) ;;
		*) echo "$err" >&2; return 1 ;;
		esac
		[ "$try" = 10 ] && { echo "$err" >&2; return 1; }
		log "enable of ${1##*/} refused (block_netlink $(cat /sys/module/target_core_user/parameters/block_netlink 2>/dev/null)), try $try" >&2
		sleep 1
	done
}

# export_via_loop BACKSTORE_DIR -> prints /dev/sdX once it exists.
# The nexus must be written before the LUN is linked: the other order leaves
# no disk and a target that cannot be removed without a reboot.
# A TCMU disk's size must be its attrib/dev_size: a READ CAPACITY gone wrong
# otherwise shows only as I/O that quietly does less. A size of 0 is left to
# the scenario (a disk exported while no daemon serves it has none yet).
export_via_loop() {
	local bs=$1 n wwn tpg addr sd
	n=$(count_matches "$TARGET"/loopback/naa.*)
	wwn=naa.50014050000000$(printf '%02x' $((n + 1)))
	tpg=$TARGET/loopback/$wwn/tpgt_1
	mkdir -p "$tpg/lun/lun_0"
	echo "naa.50014059000000$(printf '%02x' $((n + 1)))" > "$tpg/nexus"
	ln -s "$bs" "$tpg/lun/lun_0/$(basename "$bs")"
	addr=$(cat "$tpg/address")  # host:channel:target
	for _ in $(seq "$(scaled 100)"); do
		sd=$(ls "/sys/bus/scsi/devices/$addr:0/block" 2>/dev/null || true)
		if [ -n "$sd" ] && [ -b "/dev/$sd" ]; then
			check_disk_size "/dev/$sd" "$bs"
			echo "/dev/$sd"
			return 0
		fi
		sleep 0.2
	done
	fail "no /dev/sdX for $bs at $addr:0"
}

# check_disk_size DEV BACKSTORE_DIR: fails if DEV's size is neither 0 nor
# the TCMU device's attrib/dev_size (other back stores have none to check).
check_disk_size() {
	local want got
	[ -r "$2/attrib/dev_size" ] || return 0
	want=$(cat "$2/attrib/dev_size")
	got=$(blockdev --getsize64 "$1")
	[ "$got" = 0 ] || [ "$got" = "$want" ] ||
		fail "$1 has $got bytes; ${2##*/}'s dev_size is $want"
}

# Mounts a fresh XFS on /mnt/bench, for the bench scenarios: the backing
# file then lives on a file system with FMODE_NOWAIT, as on a server (tmpfs
# would send every io_uring read and write to an io-wq thread). Under it, by
# mount_loop_ext4 NAME MB: a fresh ext4 of MB MiB on a loop device over
# /tmp/NAME-fs.img (preallocated: tmpfs pages are then charged up front, not
# to whichever process writes first), mounted on /mnt/NAME.
mount_loop_ext4() {
	modprobe loop
	fallocate -l "$2"M "/tmp/$1-fs.img"
	mkfs.ext4 -q -F "/tmp/$1-fs.img"
	mkdir -p "/mnt/$1"
	mount -o loop "/tmp/$1-fs.img" "/mnt/$1"
}

# BENCH_MEDIUM: "loop" (default), a loop device over a 400 MiB tmpfs file;
# "virtio", the disk tests/vm/run --disk attaches (bench_disk), on which an
# O_DIRECT read is the disk's DMA, done by QEMU outside the guest's count,
# where on the loop device it is a copy from tmpfs by the loop worker.
mount_bench_xfs() {
	local dev=/tmp/xfs.img
	modprobe xfs
	mkdir -p /mnt/bench
	case ${BENCH_MEDIUM:-loop} in
	loop)
		modprobe loop
		truncate -s 400M /tmp/xfs.img
		mkfs.xfs -q /tmp/xfs.img
		mount -o loop /tmp/xfs.img /mnt/bench
		;;
	virtio)
		dev=$(bench_disk)
		mkfs.xfs -q -f "$dev"
		mount "$dev" /mnt/bench
		;;
	*) fail "BENCH_MEDIUM is loop or virtio, not ${BENCH_MEDIUM}" ;;
	esac
	log "bench file system: XFS on ${BENCH_MEDIUM:-loop} ($(findmnt -no SOURCE /mnt/bench))"
}

# The virtio-blk disk tests/vm/run --disk attaches (serial tcmud-bench),
# as /dev/vdX; fails when there is none.
bench_disk() {
	local s
	modprobe virtio_blk
	for _ in $(seq "$(scaled 50)"); do
		for s in /sys/block/vd*/serial; do
			if [ -f "$s" ] && [ "$(cat "$s")" = tcmud-bench ]; then
				s=${s%/serial}
				echo "/dev/${s##*/}"
				return 0
			fi
		done
		sleep 0.2
	done
	fail "no virtio disk with serial tcmud-bench (tests/vm/run --disk MB)"
}

# The sg node of a /dev/sdX.
sg_of() { echo "/dev/$(ls "/sys/block/$(basename "$1")/device/scsi_generic")"; }

# Removes every loopback and iSCSI target and backstore (LUNs first, then
# TPGs, targets, devices), whatever the scenario left. (The iSCSI ones are
# portal groups without portals, as the ALUA scenarios make them.)
remove_all_targets() {
	local t tpg lun link d h g
	for t in "$TARGET"/loopback/naa.* "$TARGET"/iscsi/iqn.*; do
		[ -d "$t" ] || continue
		for tpg in "$t"/tpgt_*; do
			for lun in "$tpg"/lun/lun_*; do
				[ -d "$lun" ] || continue
				for link in "$lun"/*; do [ -L "$link" ] && rm -f "$link"; done
				rmdir "$lun"
			done
			echo NULL > "$tpg/nexus" 2>/dev/null || true
			rmdir "$tpg"
		done
		rmdir "$t"
	done
	for d in "$TARGET"/core/*_*/*/; do
		if [ ! -d "$d" ] || [ "$(basename "$d")" = alua ]; then continue; fi
		# ALUA groups a scenario made (the kernel's default goes with the device).
		for g in "$d"alua/*/; do
			if [ -d "$g" ] && [ "$(basename "$g")" != default_tg_pt_gp ]; then rmdir "$g" 2>/dev/null || true; fi
		done
		rmdir "$d" 2>/dev/null || true
	done
	for h in "$TARGET"/core/*_*; do
		if [ -d "$h" ]; then rmdir "$h" 2>/dev/null || true; fi
	done
}

# size_kib SIZE: a fio size (4096, 512K, 32M, 1G) in KiB.
size_kib() {
	case $1 in
	*K) echo "${1%K}" ;;
	*M) echo $(( ${1%M} << 10 )) ;;
	*G) echo $(( ${1%G} << 20 )) ;;
	*) echo $(( $1 >> 10 )) ;;
	esac
}

# fio_checked WHAT TOTAL FIO_ARGS...: runs fio write+verify jobs (FIO_ARGS
# say which) and fails unless fio exits 0 and its jobs together wrote TOTAL
# and read all of it back. On a disk or region smaller than a job asks for,
# fio does no I/O and still exits 0: the byte count is what shows that the
# verify ran. The results stay in /tmp/fio.<WHAT>.terse.
fio_checked() {
	local what=$1 want terse got
	want=$(size_kib "$2")
	terse=/tmp/fio.${what//[^A-Za-z0-9_.-]/_}.terse
	shift 2
	fio "$@" --output-format=terse --terse-version=3 >"$terse" ||
		{ cat "$terse"; fail "fio $what"; }
	# terse v3: field 6 is the KiB read (the verify pass), 47 the KiB
	# written; one line per job, or one for all with --group_reporting.
	got=$(awk -F';' '$1 == 3 { r += $6; w += $47 } END { print r + 0 ":" w + 0 }' "$terse")
	[ "$got" = "$want:$want" ] ||
		{ cat "$terse"; fail "fio $what: read:written KiB $got, not $want each"; }
}

# fio_write_verify DEV SIZE: writes SIZE of random-sized blocks with crc32c
# checksums through O_DIRECT, then reads every block back and checks it.
# SIZE: bytes, or a number with K, M or G. Fails unless fio wrote and read
# back all of SIZE: on a disk smaller than SIZE (a READ CAPACITY gone
# wrong) fio quietly does less, or nothing, and exits 0.
fio_write_verify() {
	local want
	want=$(size_kib "$2")
	if [ -b "$1" ]; then
		local got
		got=$(blockdev --getsize64 "$1")
		[ "$got" -ge $(( want << 10 )) ] ||
			fail "fio write+verify on $1: the disk has $got bytes, fewer than $2"
	fi
	# WHAT names the disk, and so the result file: two disks may be verified at once.
	fio_checked "write+verify on $1" "$2" --name=write-verify --filename="$1" \
		--size="$2" --direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite \
		--bsrange=4k-128k --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--verify_backlog=0
	log "fio write+verify of $2 on $1 passed"
}

# fio_verify_loop DEV SIZE STOP_FILE: fio_write_verify passes, one after
# another, until STOP_FILE exists (the pass under way finishes first), so
# write+verify I/O spans however many daemon restarts a scenario makes,
# whatever the machine's speed. Run it in the background; it exits non-zero
# on the first I/O error or failed verify.
fio_verify_loop() {
	local passes=0
	while [ ! -e "$3" ]; do
		fio_write_verify "$1" "$2"
		passes=$((passes + 1))
	done
	log "fio write+verify on $1: $passes passes, no error"
}

# Daemons a scenario started, stopped only after the targets are gone: a
# TCMU device whose daemon died first makes the LUN's last SYNCHRONIZE CACHE
# wait for the kernel's command timeout.
daemons_to_stop=()
stop_on_exit() { daemons_to_stop+=("$1"); }

# Starts the freshly built tcmud in the background, logging to
# /tmp/tcmud.log, and waits until it says it is ready.
# The log goes straight to the host's share, so it survives a hung guest.
TCMUD_LOG=${TCMUD_VM_OUT:-/tmp}/${TCMUD_SCENARIO:-scenario}.tcmud.log
# TCMUD_BIN: another tcmud binary (a benchmark's "before" build).
# shellcheck disable=SC2120 # its arguments (more tcmud options) are optional
start_tcmud() {
	# The log is appended to across restarts: wait for this daemon's own
	# "ready" line, not an earlier one's.
	local ready
	ready=$(grep -c "ready, serving" "$TCMUD_LOG" 2>/dev/null || true)
	# TCMUD_ENV: NAME=VALUE lines for tcmud's environment only (a bench
	# variant's CEPH_ARGS or GLIBC_TUNABLES), not for the scenario's tools.
	local -a extra=()
	[ -z "${TCMUD_ENV:-}" ] || mapfile -t extra <<< "$TCMUD_ENV"
	env "${extra[@]}" "${TCMUD_BIN:-$TCMUD_BUILD/daemon/core/tcmud}" \
		--log-level "${TCMUD_LOG_LEVEL:-info}" "$@" >>"$TCMUD_LOG" 2>&1 &
	TCMUD_PID=$!
	stop_on_exit $TCMUD_PID
	for _ in $(seq "$(scaled 100)"); do
		[ "$(grep -c "ready, serving" "$TCMUD_LOG" 2>/dev/null || true)" -gt "${ready:-0}" ] \
			&& return 0
		kill -0 $TCMUD_PID 2>/dev/null || { cat "$TCMUD_LOG"; fail "tcmud exited at start"; }
		sleep 0.1
	done
	fail "tcmud did not report ready"
}

# State is asserted from tcmudctl's JSON, not from log wording, wherever
# tcmudctl exposes it; the log is for events (taken over, refused, why).
TCMUDCTL=$TCMUD_BUILD/tools/tcmudctl/tcmudctl
# listed NAME FIELD -> FIELD (name, state, size, nr_queues, max_in_flight,
# ...) of device NAME in `tcmudctl list --json`; empty when NAME is not served.
listed() {
	"$TCMUDCTL" list --json |
		jq -r --arg n "$1" --arg f "$2" '.devices[] | select(.name == $n) | .[$f]'
}
# wait_listed NAME FIELD VALUE: until `listed NAME FIELD` says VALUE ("" for
# a device no longer served), at most 5 s (scaled); fails otherwise.
wait_listed() {
	local got=""
	for _ in $(seq "$(scaled 50)"); do
		got=$(listed "$1" "$2")
		[ "$got" = "$3" ] && return 0
		sleep 0.1
	done
	fail "tcmudctl list: $1's $2 is '$got', expected '$3'"
}
# queue_metric NAME QUEUE METRIC -> METRIC (a per-queue counter such as
# tcmud_task_management_total) of device NAME's queue QUEUE in `tcmudctl
# metrics`; 0 when the daemon does not report it.
queue_metric() {
	"$TCMUDCTL" metrics | awk -v m="$3" -v d="device=\"$1\"" -v q="queue=\"$2\"" '
		index($0, m "{") == 1 && index($0, d) && index($0, q "}") { v = $NF }
		END { print v + 0 }'
}

# kill_and_restart_tcmud ROUNDS DEVICE [IO_PID]: ROUNDS times, after a
# random 0.3-2 s (so kills land in different phases of the I/O: writes,
# verify reads, a pass starting), SIGKILLs tcmud and starts it again; each
# restart must take DEVICE over (its log then holds one more "DEVICE: taken
# over" line than before). With IO_PID, that process must still be running
# at every kill, or the kills did not happen under I/O.
tcmud_kills=0  # in this scenario, over every call
kill_and_restart_tcmud() {
	local rounds=$1 name=$2 io_pid=${3:-} round before after ms start_ns dead_ns
	for round in $(seq "$rounds"); do
		ms=$((300 + RANDOM % 1700))
		sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
		if [ -n "$io_pid" ] && ! kill -0 "$io_pid" 2>/dev/null; then
			fail "the I/O had ended before kill $round"
		fi
		before=$(grep -c "$name: taken over" "$TCMUD_LOG" || true)
		start_ns=$(date +%s%N)
		kill -9 "$TCMUD_PID"
		wait "$TCMUD_PID" 2>/dev/null || true
		dead_ns=$(date +%s%N)
		start_tcmud
		after=$(grep -c "$name: taken over" "$TCMUD_LOG" || true)
		[ "$after" -eq $((before + 1)) ] || fail "restart $round did not take $name over"
		tcmud_kills=$((tcmud_kills + 1))
		log "kill $tcmud_kills after ${ms} ms: $name taken over; gone in" \
			"$(((dead_ns - start_ns) / 1000000)) ms, ready in" \
			"$((($(date +%s%N) - dead_ns) / 1000000)) ms"
	done
}

# cleanup_scenario [RC]: the exit status to keep (default: the last
# command's). A scenario's own EXIT trap passes its $? here: under errexit a
# "(exit $rc)" to restore it would end the trap before anything is stopped.
cleanup_scenario() {
	local rc=${1:-$?} pid
	set +e
	remove_all_targets 2>/dev/null || true
	for pid in "${daemons_to_stop[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	exit "$rc"
}
trap cleanup_scenario EXIT
