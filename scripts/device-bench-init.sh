#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh # busybox ash: POSIX sh
# The /init of the self-contained benchmark guest (scripts/device-bench-bundle.sh
# puts it into an initramfs that is the guest's whole root: busybox, fio,
# tcmud, mkfs.xfs, Debian's ld.so and libraries, the stock target modules
# and kmod/'s uio.ko + target_core_user.ko). No 9p, no host root: the guest
# needs nothing from the machine it runs on but QEMU.
#
# In one boot, one back end at a time, the same prefilled file through
# tcm_loop, fio randread (4k at each of devbench.jobs4k, 128k at
# devbench.jobs128k):
#   stock modules:   fileio (LIO in-kernel), tcmud (classic single ring)
#   patched modules: fileio again, tcmud with nr_queues=N for N in
#                    devbench.queues
#   stock modules once more (stock2), unless devbench.restock=0: the drift
#                    over the boot, for the comparisons across halves
# Result lines go to the second serial port (/dev/ttyS1), one per fio run:
#   R LABEL HALF WORKLOAD JOBS IOPS BW_KIB COMMANDS DAEMON_TICKS USR_CPU SYS_CPU
# and everything else to the console. Kernel command line parameters
# (defaults in brackets): devbench.size_mb [256] devbench.runtime [5]
# devbench.ramp [1] devbench.iodepth [16] devbench.jobs4k ["2,4"]
# devbench.jobs128k ["2"] devbench.queues ["1,4"] devbench.fs [xfs|tmpfs]
# devbench.restock [1: the stock half once more at the end, as "stock2"]
# (lists comma-separated).
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run /var/log /mnt/bench
mount -t tmpfs -o size=90% tmpfs /tmp
ln -sf /proc/self/fd /dev/fd

say() { echo "devbench: [$(cut -d' ' -f1 /proc/uptime)] $*"; }
result() { echo "R $*" > /dev/ttyS1; say "R $*"; }
die() {
	say "FAIL: $*"
	echo "FAIL $*" > /dev/ttyS1
	dmesg | tail -40
	sync
	poweroff -f
}
arg() {
	v=$(echo " $(cat /proc/cmdline) " | sed -n "s/.* $1=\([^ ]*\) .*/\1/p")
	[ -n "$v" ] && echo "$v" | tr , ' ' || echo "$2"
}
size_mb=$(arg devbench.size_mb 256)
runtime=$(arg devbench.runtime 5)
ramp=$(arg devbench.ramp 1)
iodepth=$(arg devbench.iodepth 16)
jobs4k=$(arg devbench.jobs4k 2,4)
jobs128k=$(arg devbench.jobs128k 2)
queues=$(arg devbench.queues 1,4)
fs=$(arg devbench.fs xfs)
restock=$(arg devbench.restock 1)
stty -F /dev/ttyS1 raw -echo 2>/dev/null || true
say "up: $(nproc) CPUs, $(sed -n 's/MemTotal: *//p' /proc/meminfo), kernel $(uname -r)"
say "params: size ${size_mb} MiB on $fs, runtime $runtime s, ramp $ramp s, iodepth $iodepth," \
	"4k jobs [$jobs4k], 128k jobs [$jobs128k], queues [$queues]"
echo "P size_mb=$size_mb fs=$fs runtime=$runtime ramp=$ramp iodepth=$iodepth nproc=$(nproc)" \
	"cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1 | tr ' ' _)" > /dev/ttyS1

ko() {
	insmod "/lib/ko/$1.ko" || die "insmod $1"
}
CONFIGFS=/sys/kernel/config
T=$CONFIGFS/target
for m in scsi_common configfs scsi_mod sd_mod; do ko "stock/$m"; done
mount -t configfs configfs $CONFIGFS
ko stock/target_core_mod
ko stock/target_core_file
ko stock/uio
ko stock/target_core_user
ko stock/tcm_loop

# The backing file: on XFS over a loop device on the guest's tmpfs (as
# tests/vm/scenarios/bench-mq.sh, so io_uring reads are not all punted to
# io-wq as they are on tmpfs, which lacks FMODE_NOWAIT), or on tmpfs itself.
case $fs in
xfs)
	for m in loop crc32c_generic libcrc32c xfs; do ko "stock/$m"; done
	truncate -s $((size_mb + size_mb / 8 + 300))M /tmp/xfs.img
	mkfs.xfs -q /tmp/xfs.img || die "mkfs.xfs"
	mount -o loop /tmp/xfs.img /mnt/bench || die "mount xfs"
	img=/mnt/bench/bench.img
	;;
tmpfs) img=/tmp/bench.img ;;
*) die "devbench.fs is xfs or tmpfs" ;;
esac
bytes=$((size_mb * 1024 * 1024))
# 1 MiB of random bytes repeated: real pages of non-zero data without
# reading size_mb MiB of /dev/urandom.
dd if=/dev/urandom of=/tmp/block bs=1M count=1 2>/dev/null
i=0
while [ $i -lt "$size_mb" ]; do cat /tmp/block; i=$((i + 1)); done > "$img"
sync
say "prefilled $img: $(stat -c %s "$img") bytes"

sdev() {
	n=0
	for t in "$T"/loopback/naa.*; do [ -e "$t" ] && n=$((n + 1)); done
	wwn=naa.50014050000000$(printf '%02x' $((n + 1)))
	tpg=$T/loopback/$wwn/tpgt_1
	mkdir -p "$tpg/lun/lun_0"
	echo "naa.50014059000000$(printf '%02x' $((n + 1)))" > "$tpg/nexus"
	ln -s "$1" "$tpg/lun/lun_0/$(basename "$1")"
	addr=$(cat "$tpg/address")
	i=0
	while [ $i -lt 300 ]; do
		sd=$(ls "/sys/bus/scsi/devices/$addr:0/block" 2>/dev/null || true)
		if [ -n "$sd" ] && [ -b "/dev/$sd" ]; then
			echo none > "/sys/block/$sd/queue/scheduler" 2>/dev/null || true
			echo "/dev/$sd"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

teardown() {
	for t in "$T"/loopback/naa.*; do
		[ -d "$t" ] || continue
		for tpg in "$t"/tpgt_*; do
			for lun in "$tpg"/lun/lun_*; do
				[ -d "$lun" ] || continue
				for l in "$lun"/*; do [ -L "$l" ] && rm -f "$l"; done
				rmdir "$lun"
			done
			echo NULL > "$tpg/nexus" 2>/dev/null || true
			rmdir "$tpg"
		done
		rmdir "$t"
	done
	for d in "$T"/core/*_*/*/; do
		[ -d "$d" ] && [ "$(basename "$d")" != alua ] && { rmdir "$d" 2>/dev/null || say "cannot remove $d"; }
	done
	for h in "$T"/core/*_*; do [ -d "$h" ] && rmdir "$h" 2>/dev/null; done
	return 0
}

ticks() {
	if [ -n "$1" ]; then sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; else echo 0; fi
}
cmds() { awk '{print $1 + $5}' "/sys/block/$(basename "$1")/stat"; }

# run LABEL HALF DEV [PID]: every workload x jobs on DEV.
run() {
	label=$1 half=$2 dev=$3 pid=${4:-}
	for spec in $(for j in $jobs4k; do echo "4k:$j"; done; for j in $jobs128k; do echo "128k:$j"; done); do
		bs=${spec%%:*} jobs=${spec#*:}
		c0=$(cmds "$dev") t0=$(ticks "$pid")
		line=$(fio --name="randread-$bs" --filename="$dev" --direct=1 --ioengine=libaio \
			--rw=randread --bs="$bs" --iodepth="$iodepth" --numjobs="$jobs" \
			--time_based --runtime="$runtime" --ramp_time="$ramp" --group_reporting \
			--output-format=terse --terse-version=3 2>/tmp/fio.err) ||
			{ cat /tmp/fio.err; die "$label randread-$bs j$jobs: fio"; }
		c1=$(cmds "$dev") t1=$(ticks "$pid")
		[ -n "$pid" ] || { t0=0 t1=-1; }
		# Terse v3: 7 read KiB/s, 8 read IOPS; 88/89 usr/sys CPU (%).
		echo "$line" | awk -F';' -v l="$label" -v h="$half" -v w="randread-$bs" -v j="$jobs" \
			-v c=$((c1 - c0)) -v t=$((t1 - t0)) \
			'{ printf "%s %s %s %s %s %s %s %s %.1f %.1f\n", l, h, w, j, $8, $7, c, (t < 0 ? "-" : t), $88 + 0, $89 + 0 }' \
			> /tmp/r
		result "$(cat /tmp/r)"
	done
}

start_tcmud() {
	/usr/bin/tcmud --no-dbus --control-socket none --log-dir /var/log --log-level info \
		> /tmp/tcmud.out 2>&1 &
	tcmud_pid=$!
	i=0
	until grep -q "ready, serving" /tmp/tcmud.out; do
		kill -0 $tcmud_pid 2>/dev/null || { cat /tmp/tcmud.out; die "tcmud exited at start"; }
		[ $i -lt 300 ] || die "tcmud not ready"
		sleep 0.1
		i=$((i + 1))
	done
}
stop_tcmud() {
	teardown
	kill "$tcmud_pid" 2>/dev/null
	i=0
	while kill -0 "$tcmud_pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 "$tcmud_pid" 2>/dev/null
	wait "$tcmud_pid" 2>/dev/null
	sed 's/^/tcmud: /' /tmp/tcmud.out | grep -E "queue|serving|error|warn" | tail -20
}

# user_dev NAME [NQ] -> the /dev/sdX of a fresh tcmud device (file handler)
user_dev() {
	d=$T/core/user_0/$1
	mkdir -p "$d"
	echo "dev_config=file/$img" > "$d/control"
	echo "dev_size=$bytes" > "$d/control"
	echo "$1-serial" > "$d/wwn/vpd_unit_serial"
	echo 1 > "$d/attrib/emulate_write_cache"
	[ -z "${2:-}" ] || echo "$2" > "$d/attrib/nr_queues"
	echo 1 > "$d/enable" || return 1
	i=0
	until for f in "/proc/$tcmud_pid"/fd/*; do readlink "$f"; done 2>/dev/null | grep -q '^/dev/uio'; do
		[ $i -lt 300 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
	sdev "$d"
}

fileio_dev() {
	d=$T/core/fileio_0/$1
	mkdir -p "$d"
	echo "fd_dev_name=$img,fd_dev_size=$bytes,fd_buffered_io=1" > "$d/control"
	echo "$1-serial" > "$d/wwn/vpd_unit_serial"
	echo 1 > "$d/enable"
	sdev "$d"
}

modinfo_line() {
	echo "$1: srcversion $(cat "/sys/module/$1/srcversion" 2>/dev/null)" \
		"taint '$(cat "/sys/module/$1/taint" 2>/dev/null)'" \
		"nr_queues attr: $([ -n "$2" ] && [ -e "$2/attrib/nr_queues" ] && echo yes || echo no)"
}

# stock_half HALF: fileio, then tcmud on the stock single ring.
stock_half() {
	dev=$(fileio_dev bench-fileio) || die "fileio device ($1)"
	say "fileio ($1) on $dev, max_sectors_kb $(cat "/sys/block/${dev#/dev/}/queue/max_sectors_kb")"
	if [ "$1" = stock ]; then
		# The boot's first I/O: fio, the kernel's I/O paths and the page
		# cache warm, outside any measured run.
		fio --name=warm --filename="$dev" --direct=1 --ioengine=libaio --rw=randread \
			--bs=4k --iodepth="$iodepth" --numjobs=2 --time_based --runtime=2 \
			--output-format=terse > /dev/null 2>&1 || die "warm-up fio"
	fi
	run fileio "$1" "$dev"
	teardown
	start_tcmud
	dev=$(user_dev bench-tcmud) || die "tcmud device ($1)"
	say "$(modinfo_line target_core_user "$T/core/user_0/bench-tcmud")"
	say "tcmud (stock ring, $1) on $dev, max_sectors_kb $(cat "/sys/block/${dev#/dev/}/queue/max_sectors_kb")"
	run tcmud-stock "$1" "$dev" "$tcmud_pid"
	stop_tcmud
	teardown
}

# ---- stock modules
stock_half stock

# ---- swap: Debian's uio/target_core_user out, kmod/'s in
rmmod target_core_user uio || die "rmmod stock target_core_user uio"
ko patched/uio
ko patched/target_core_user
case $(cat /sys/module/target_core_user/taint) in
*O*) ;;
*) die "target_core_user is not the out-of-tree build" ;;
esac
say "patched modules live"

dev=$(fileio_dev bench-fileio) || die "fileio device (patched)"
run fileio patched "$dev"
teardown

start_tcmud
for nq in $queues; do
	dev=$(user_dev "bench-q$nq" "$nq") || die "tcmud device nr_queues=$nq"
	[ "$(cat "$T/core/user_0/bench-q$nq/attrib/nr_queues")" = "$nq" ] || die "nr_queues $nq not set"
	say "$(modinfo_line target_core_user "$T/core/user_0/bench-q$nq")"
	grep "bench-q$nq: serving" /tmp/tcmud.out | tail -1
	run "tcmud-${nq}q" patched "$dev" "$tcmud_pid"
	teardown
done
stop_tcmud

# ---- stock modules again (devbench.restock=1): the drift of the host over
# the boot shows in fileio and tcmud-stock against the first stock half.
if [ "$restock" = 1 ]; then
	rmmod target_core_user uio || die "rmmod patched target_core_user uio"
	ko stock/uio
	ko stock/target_core_user
	case $(cat /sys/module/target_core_user/taint) in
	*O*) die "target_core_user is still the out-of-tree build" ;;
	esac
	say "stock modules live again"
	stock_half stock2
fi

bad=$(dmesg | grep -cE "BUG|WARNING|Oops|hung_task|blocked for more than" || true)
say "kernel reports (BUG/WARNING/Oops/hung): $bad"
[ "$bad" = 0 ] || dmesg | grep -E -A20 "BUG|WARNING|Oops|blocked for more than" | head -80
echo "DONE kernel_reports=$bad" > /dev/ttyS1
say "done"
sync
poweroff -f
