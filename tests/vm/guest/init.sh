#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Stage 2 of the guest, PID 1 after switch_root: the host's root file system
# (read-only 9p under a tmpfs overlay) with the host's own tools. Runs the
# scenarios the host listed in /vm-out/plan, one after another in this one
# boot, and leaves each one's log and exit status in /vm-out for the host.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# /tmp stays the overlay's (already RAM-backed): a tmpfs over it would hide
# a source tree or build directory that lives under the host's /tmp.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
hostname tcmud-vm

out=/vm-out
# shellcheck source=/dev/null
. "$out/plan.env"   # TCMUD_SRC, TCMUD_BUILD, TCMUD_KERNEL_ROOT, TCMUD_KMOD, scenario timeout
export TCMUD_LOG_LEVEL TCMUD_SRC TCMUD_BUILD TCMUD_KERNEL_ROOT TCMUD_KMOD TCMUD_SCENARIO_TIMEOUT TCMUD_VM_OUT=$out
# 1 or 2 when tests/vm/run --insn/--insn-profile loaded the instruction counter
export TCMUD_INSN=${TCMUD_INSN:-0}
# A sanitized build (tests/vm/asan.list): the host's options reach the daemon.
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS
[ -n "${UBSAN_OPTIONS:-}" ] && export UBSAN_OPTIONS
# How much slower than the stock kernel this one runs (3 under the debug
# kernel): scenarios multiply their waits by it, never their checks.
export TCMUD_TIME_SCALE=${TCMUD_TIME_SCALE:-1}
mkdir -p /lib/modules
mount --bind "$TCMUD_KERNEL_ROOT/lib/modules" /lib/modules
sysctl -qw kernel.hung_task_timeout_secs=$((60 * TCMUD_TIME_SCALE)) 2>/dev/null
echo 1 > /proc/sys/kernel/sysrq

# Guest networking, for the Ceph scenarios only (tests/vm/run --ceph):
# QEMU's user-mode network, the address and gateway slirp expects.
if [ "${TCMUD_GUEST_NET:-0}" = 1 ]; then
	modprobe virtio_net
	ip link set lo up
	ip link set eth0 up
	ip addr add 10.0.2.15/24 dev eth0
	ip route add default via 10.0.2.2
	echo "guest: eth0 10.0.2.15, cluster at ${TCMUD_CEPH_MON_IP:-?}"
fi
echo "guest: up after $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r)"
: > "$out/results"
while read -r name; do
	[ -n "$name" ] || continue
	script=$TCMUD_SRC/tests/vm/scenarios/$name.sh
	echo "guest: scenario $name"
	echo "tcmud-vm: scenario $name start" > /dev/kmsg
	start=$(date +%s)
	if [ -f "$script" ]; then
		(cd /tmp && TCMUD_SCENARIO=$name timeout -k 15 "$TCMUD_SCENARIO_TIMEOUT" bash "$script") \
			> "$out/$name.log" 2>&1
		rc=$?
	else
		echo "no such scenario: $script" > "$out/$name.log"
		rc=127
	fi
	echo "tcmud-vm: scenario $name end" > /dev/kmsg
	echo "$name $rc $(( $(date +%s) - start ))" >> "$out/results"
	echo "guest: scenario $name exit $rc"
done < "$out/plan"

dmesg > "$out/dmesg.log"
echo "guest: done after $(cut -d' ' -f1 /proc/uptime) s"
sync
/bin/busybox poweroff -f
