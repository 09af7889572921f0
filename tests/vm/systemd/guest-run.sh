#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd guest's scenario runner (tcmud-vm-run.service). Runs the
# scenarios in /vm-out/plan that have no result yet, one after another. A
# scenario that exits 100 asks for a reboot: the runner leaves /vm-out/reboot
# for the host (which boots the guest again on the same persistent disk),
# reboots through systemd, and on the next boot runs that scenario again
# with TCMUD_BOOT one higher (the scenario keeps its own state on the disk).
set -u
out=/vm-out
# shellcheck source=/dev/null
. "$out/plan.env"
export TCMUD_LOG_LEVEL TCMUD_SRC TCMUD_BUILD TCMUD_KERNEL_ROOT TCMUD_KMOD TCMUD_SCENARIO_TIMEOUT \
	TCMUD_VM_OUT=$out HOME=/root LANG=C.UTF-8 TCMUD_VM_SYSTEMD=1
boot=$(( $(cat "$out/boots" 2>/dev/null || echo 0) + 1 ))
echo "$boot" > "$out/boots"
export TCMUD_BOOT=$boot
sysctl -qw kernel.hung_task_timeout_secs=60 2>/dev/null
echo 1 > /proc/sys/kernel/sysrq
# Guest networking, for the Ceph scenarios only (tests/vm/run --ceph), as
# guest/init.sh sets it up: QEMU's user-mode network, the address and
# gateway slirp expects, on the one NIC (whatever udev named it).
if [ "${TCMUD_GUEST_NET:-0}" = 1 ]; then
	modprobe virtio_net
	nic=""
	for _ in $(seq 100); do
		nic=$(find /sys/class/net -mindepth 1 -maxdepth 1 ! -name lo -printf '%f\n' | head -n1)
		[ -n "$nic" ] && break
		sleep 0.1
	done
	ip link set lo up
	ip link set "$nic" up
	ip addr add 10.0.2.15/24 dev "$nic"
	ip route replace default via 10.0.2.2
	echo "guest: $nic 10.0.2.15, cluster at ${TCMUD_CEPH_MON_IP:-?}"
fi
echo "guest: up after $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r), boot $boot," \
	"$(systemctl is-system-running 2>&1)"
# Where the boot's time went, for the log (TCG makes every unit slow;
# "systemd-analyze blame" would take another minute).
systemd-analyze 2>/dev/null | head -n1 | sed 's/^/guest: /'
touch "$out/results"
while read -r name; do
	[ -n "$name" ] || continue
	grep -q "^$name " "$out/results" && continue
	script=$TCMUD_SRC/tests/vm/scenarios/$name.sh
	echo "guest: scenario $name (boot $boot)"
	echo "tcmud-vm: scenario $name start" > /dev/kmsg
	start=$(date +%s)
	(cd /tmp && TCMUD_SCENARIO=$name timeout -k 15 "$TCMUD_SCENARIO_TIMEOUT" bash "$script") \
		>> "$out/$name.log" 2>&1
	rc=$?
	if [ $rc = 100 ] && [ "$boot" -lt 4 ]; then
		echo "guest: scenario $name asks for a reboot after $(( $(date +%s) - start )) s"
		dmesg >> "$out/dmesg.log"
		touch "$out/reboot"
		sync
		systemctl reboot
		exit 0
	fi
	echo "tcmud-vm: scenario $name end" > /dev/kmsg
	# What systemd and the services said, for a failure's post-mortem.
	[ $rc = 0 ] || journalctl -b --no-pager -o short-monotonic > "$out/$name.journal" 2>&1
	echo "$name $rc $(( $(date +%s) - start ))" >> "$out/results"
	echo "guest: scenario $name exit $rc"
done < "$out/plan"
dmesg >> "$out/dmesg.log"
echo "guest: done after $(cut -d' ' -f1 /proc/uptime) s"
sync
systemctl poweroff
