# SPDX-License-Identifier: GPL-2.0-or-later
# The packaged tcmud under systemd (after systemd-tcmud installed it):
# removing a device whose backing I/O is stuck must not cost the daemon its
# watchdog. The LUN sits on dm-delay holding I/O 120 s, a READ is stuck in
# tcmud, the kernel times the command out (cmd_time_out 5 s), and the
# device is removed: tcmud's drain then waits its full 30 s for the stuck
# I/O, longer than WatchdogSec=20s. The heartbeat runs on its own thread,
# so systemd keeps getting WATCHDOG=1: same main PID, no watchdog kill, and
# another LUN keeps serving throughout.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/systemd-lib.sh"
load_target_stack
modprobe dm_mod
modprobe dm_delay
modprobe loop
dpkg -s tcmud > /dev/null 2>&1 || fail "the tcmud package is not installed (run systemd-tcmud first)"
pid=$(wait_tcmud_active)
restarts=$(systemctl show -p NRestarts --value tcmud)
# systemd-tcmud-faults fires the watchdog on purpose in this boot: only a
# timeout logged from here on counts.
watchdog_timeouts() {
	journalctl -b -u tcmud --no-pager | grep -ci "watchdog timeout" || true
}
timeouts=$(watchdog_timeouts)

finish() {
	local rc=$?
	set +e
	touch /tmp/slowrm.stop
	# The steady LUN's fio ends before cleanup removes its LUN. (When this
	# scenario failed in CI, on 7921f6a, with fio left running, the next
	# scenario's LUN got no disk; not reproduced since.)
	[ -z "${io:-}" ] || wait "$io" 2>/dev/null
	dmsetup remove --force tcmud-slowrm 2>/dev/null
	cleanup_scenario $rc
}
trap finish EXIT

# A steady LUN with write+verify running all along.
truncate -s 32M $STATE/steady-rm.img
steady_bs=$(create_user_backstore steadyrm0 file $STATE/steady-rm.img $((32 << 20)))
steady=$(export_via_loop "$steady_bs")
rm -f /tmp/slowrm.stop
fio_verify_loop "$steady" 4M /tmp/slowrm.stop & io=$!

truncate -s 16M /tmp/slowrm.img
loopdev=$(losetup -f --show /tmp/slowrm.img)
# No delay while the disk appears: the kernel's partition scan and
# export_via_loop's size check would otherwise sit behind 120 s reads (CI,
# on 7b6c0a2: "task blockdev blocked for more than 61 seconds").
echo "0 32768 delay $loopdev 0 0" | dmsetup create tcmud-slowrm
dm=/dev/dm-$(dmsetup info -c --noheadings -o minor tcmud-slowrm | tr -d ' ')
[ -b "$dm" ] || fail "no $dm"
bs=$(create_user_backstore slowrm0 file "$dm;block;direct=1" $((16 << 20)))
echo 5 > "$bs/attrib/cmd_time_out"
dev=$(export_via_loop "$bs")
wait_journal 'file/slowrm0: serving' 1
udevadm settle --timeout=30 || true
echo "0 32768 delay $loopdev 0 120000" | dmsetup load tcmud-slowrm
dmsetup suspend tcmud-slowrm
dmsetup resume tcmud-slowrm
log "slowrm0 is $dev on $dm (I/O held 120 s)"
dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null &
sleep 8 # the READ is in tcmud's io_uring; the kernel timed it out at 5 s
# The LUN, then the device: REMOVED_DEVICE reaches tcmud with the READ
# still stuck in dm-delay.
lun=""
for l in "$TARGET"/loopback/*/tpgt_1/lun/lun_0/*; do
	[ "$(readlink -f "$l")" = "$(readlink -f "$bs")" ] && lun=$(dirname "$l")
done
[ -d "$lun" ] || fail "no LUN for slowrm0"
tpg=$(dirname "$(dirname "$lun")")
for l in "$lun"/*; do [ -L "$l" ] && rm -f "$l"; done
rmdir "$lun"
echo NULL > "$tpg/nexus" 2>/dev/null || true
rmdir "$tpg" "$(dirname "$tpg")"
t0=$(date +%s)
rmdir "$bs"
log "slowrm0 removed in $(( $(date +%s) - t0 )) s"
wait_journal 'file/slowrm0: released' 1
journalctl -b -u tcmud -o cat --no-pager | grep -E 'slowrm0: (queue 0: drain|released)' |
	while read -r line; do log "tcmud: $line"; done
expect_eq "$(tcmud_pid)" "$pid" "tcmud's main PID after a 30 s drain"
expect_eq "$(systemctl show -p NRestarts --value tcmud)" "$restarts" "NRestarts"
expect_eq "$(watchdog_timeouts)" "$timeouts" \
	"systemd's watchdog timeouts logged (any new one: it fired during the removal)"
kill -0 $io 2>/dev/null || fail "write+verify on the steady LUN ended during the removal"
touch /tmp/slowrm.stop
wait $io || fail "write+verify on the steady LUN"
log "a 30 s drain at removal kept the watchdog fed; the other LUN served throughout"
