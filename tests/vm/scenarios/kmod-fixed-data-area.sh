# SPDX-License-Identifier: GPL-2.0-or-later
# attrib/data_area_fixed (kmod patch 0009; needs --kmod):
#  1. the attribute: 0 by default, 0 or 1 only, refused once the device is
#     enabled (on a default device and on a fixed one).
#  2. the promise, seen from user space with no daemon: every queue's
#     mailbox of a fixed device (nr_queues 1 and 2) has
#     TCMU_MAILBOX_FLAG_CAP_DATA_FIXED and every page of its data area can be
#     touched through the mapping at once; a default device has no flag,
#     and touching its first data page is SIGBUS (the pages do not exist
#     yet: what made pinning the data area impossible).
#  3. reclaim: Debian's tcmu-runner (user:qcow on raw images) serves a fixed
#     and a default device, max_data_area_mb=4 each, with fio crc32c
#     write+verify on both while global_max_data_area_mb is lowered to 1
#     under them (the reclaim work then runs every 5 s). The default
#     device's pages are freed (find_free_blocks' debug line) and unmapped
#     from tcmu-runner (none of its data pages stays mapped); the fixed
#     device's never: no "Freed" line names it, and the data pages
#     tcmu-runner has mapped are the same number before and after two more
#     reclaim passes over the idle devices.
#  The reclaim work, which fix0 keeps over the limit, runs every 5 s and
#  does not spin.
#  4. the same pressure on tcmud (file backstores on ext4): a fixed device
#     with direct=1 and one with direct=0, whose data areas tcmud registers
#     as io_uring fixed buffers (its log says so), and a default one with
#     direct=1, which it does not register: fio crc32c write+verify passes
#     on all three while the default one's pages are reclaimed, and no
#     "Freed" line names a fixed one.
# No "Invalid addr to data page" for any device but part 2's default one.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
load_target_stack
[ -e "$TARGET/core" ] || mkdir -p "$TARGET/core"
gmax=/sys/module/target_core_user/parameters/global_max_data_area_mb
old_gmax=$(cat $gmax)
restore() {
	local rc=$?
	echo "$old_gmax" > $gmax 2>/dev/null
	echo "module target_core_user func find_free_blocks -p" > /proc/dynamic_debug/control 2>/dev/null
	cleanup_scenario "$rc"
}
trap restore EXIT
# The kernel's log from here on (this scenario's lines only).
mark_kmsg kmod-fixed-data-area

# --- 1. the attribute ------------------------------------------------------
a=$TARGET/core/user_0/attr0
mkdir -p "$a"
[ -e "$a/attrib/data_area_fixed" ] || fail "no attrib/data_area_fixed: not the 0009 build"
expect_eq "$(cat "$a/attrib/data_area_fixed")" 0 "data_area_fixed default"
if echo 2 > "$a/attrib/data_area_fixed" 2>/dev/null; then fail "data_area_fixed took 2"; fi
echo 1 > "$a/attrib/data_area_fixed"
expect_eq "$(cat "$a/attrib/data_area_fixed")" 1 "data_area_fixed after writing 1"
echo 0 > "$a/attrib/data_area_fixed"
expect_eq "$(cat "$a/attrib/data_area_fixed")" 0 "data_area_fixed after writing 0"
rmdir "$a"
USER_BACKSTORE_CONTROL="nl_reply_supported=-1 max_data_area_mb=4" \
	create_user_backstore attr0 none x $((16 << 20)) > /dev/null
if echo 1 > "$a/attrib/data_area_fixed" 2>/dev/null; then
	fail "data_area_fixed was changed on an enabled device"
fi
expect_eq "$(cat "$a/attrib/data_area_fixed")" 0 "data_area_fixed after a refused write"
b=$(USER_BACKSTORE_CONTROL="nl_reply_supported=-1 max_data_area_mb=4" USER_BACKSTORE_ATTRS="data_area_fixed=1" \
	create_user_backstore attr1 none x $((16 << 20)))
if echo 0 > "$b/attrib/data_area_fixed" 2>/dev/null; then
	fail "data_area_fixed was cleared on an enabled device"
fi
expect_eq "$(cat "$b/attrib/data_area_fixed")" 1 "fixed device's data_area_fixed after a refused write"
klog | grep -q "Cannot set data_area_fixed after the device has been enabled" ||
	fail "no kernel message for the refused write"
remove_all_targets
log "attribute: default 0, 2 refused, fixed once enabled"

# --- 2. flag and pages, seen through the mapping ---------------------------
cat > /tmp/probe.py <<'EOF'
# probe.py /dev/uioN MAP_SIZE: prints the mailbox flags, then touches every
# page of the data area (a SIGBUS kills the process) and prints the count.
import mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
size = int(sys.argv[2], 0)
mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
_, flags, cmdr_off, cmdr_size = struct.unpack_from("<HHII", mm, 0)
data_off = cmdr_off + cmdr_size
print("flags 0x%x data_off %d data_pages %d" % (flags, data_off, (size - data_off) // 4096), flush=True)
n = 0
for off in range(data_off, size, 4096):
    _ = mm[off]
    n += 1
print("touched %d" % n, flush=True)
EOF
# uio_of NAME [QUEUE]: /dev/uioN of backstore NAME's queue (default 0).
uio_of() {
	local d want
	for d in /sys/class/uio/uio*; do
		case $(cat "$d/name") in
		"tcm-user/"*"/$1/"*) [ "${2:-0}" = 0 ] && want=${d##*/} ;;
		"tcmu-queue/"*"/$1/${2:-0}") want=${d##*/} ;;
		esac
	done
	[ -n "${want:-}" ] || fail "no uio device for $1 queue ${2:-0}"
	echo "$want"
}
CAP_DATA_FIXED=$((1 << 14)) CAP_MQ=$((1 << 15))
# probe NAME QUEUE WANT(fixed|default)
probe() {
	local uio out rc=0 flags pages
	uio=$(uio_of "$1" "$2")
	out=$(python3 /tmp/probe.py "/dev/$uio" "$(cat "/sys/class/uio/$uio/maps/map0/size")" 2>&1) || rc=$?
	log "probe $1 queue $2 ($uio): $(echo "$out" | tr '\n' ' ')rc $rc" >&2
	flags=$(sed -n 's/^flags \(0x[0-9a-f]*\) .*/\1/p' <<<"$out")
	pages=$(sed -n 's/.* data_pages \([0-9]*\)$/\1/p' <<<"$out")
	[ -n "$flags" ] || fail "probe $1: no mailbox read"
	if [ "$3" = fixed ]; then
		expect_eq "$((flags & CAP_DATA_FIXED))" "$CAP_DATA_FIXED" "$1 queue $2: CAP_DATA_FIXED"
		expect_eq "$rc" 0 "$1 queue $2: probe exit status (SIGBUS is 135)"
		expect_eq "$(sed -n 's/^touched //p' <<<"$out")" "$pages" "$1 queue $2: data pages touched"
	else
		expect_eq "$((flags & CAP_DATA_FIXED))" 0 "$1 queue $2: CAP_DATA_FIXED"
		expect_eq "$rc" 135 "$1 queue $2: probe exit status (SIGBUS on the first data page)"
	fi
	echo "$flags"
}
ctl="nl_reply_supported=-1 max_data_area_mb=4"
USER_BACKSTORE_CONTROL=$ctl USER_BACKSTORE_ATTRS="data_area_fixed=1" \
	create_user_backstore pfix1 none x $((16 << 20)) > /dev/null
USER_BACKSTORE_CONTROL=$ctl USER_BACKSTORE_ATTRS="data_area_fixed=1 nr_queues=2" \
	create_user_backstore pfix2 none x $((16 << 20)) > /dev/null
USER_BACKSTORE_CONTROL=$ctl create_user_backstore pdef none x $((16 << 20)) > /dev/null
flags=$(probe pfix1 0 fixed)
expect_eq "$((flags & CAP_MQ))" 0 "pfix1 (1 queue): CAP_MQ"
for q in 0 1; do
	flags=$(probe pfix2 $q fixed)
	expect_eq "$((flags & CAP_MQ))" "$CAP_MQ" "pfix2 queue $q: CAP_MQ"
done
probe pdef 0 default > /dev/null
remove_all_targets
log "mapping: fixed devices' data areas fully present with the flag; default: no flag, SIGBUS"

# --- 3. reclaim under stock tcmu-runner ------------------------------------
echo "module target_core_user func find_free_blocks +p" > /proc/dynamic_debug/control
mkdir -p /etc/tcmu /var/log/tcmu
tcmu-runner -l /var/log/tcmu &
runner=$!
stop_on_exit $runner
# tcmu-runner blocks the kernel's netlink while it starts up (a device
# enabled meanwhile fails with "Interface is blocked"): wait until it has
# announced reply support and unblocked.
for _ in $(seq "$(scaled 100)"); do
	kill -0 $runner || fail "tcmu-runner did not start"
	klog | grep -q "tcmu daemon: command reply support 1" &&
		[ "$(cat /sys/module/target_core_user/parameters/block_netlink)" = 0 ] && break
	sleep 0.1
done
truncate -s 128M /tmp/fix0.img /tmp/def0.img
fix=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" USER_BACKSTORE_ATTRS="data_area_fixed=1" \
	create_user_backstore fix0 qcow /tmp/fix0.img $((128 << 20)))
def=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" create_user_backstore def0 qcow /tmp/def0.img $((128 << 20)))
expect_eq "$(cat "$fix/attrib/data_area_fixed")" 1 "fix0 data_area_fixed"
fix_dev=$(export_via_loop "$fix")
def_dev=$(export_via_loop "$def")
fix_uio=$(uio_of fix0) def_uio=$(uio_of def0)
log "tcmu-runner disks: fix0 $fix_dev ($fix_uio), def0 $def_dev ($def_uio)"
# present UIO: pages of the data area (the last 4 MiB of the map) that
# tcmu-runner's mapping of /dev/UIO has mapped now (/proc/PID/pagemap, bit
# 63). A reclaimed page is unmapped from the daemon (unmap_mapping_range).
cat > /tmp/present.py <<'EOF'
import struct, sys
pid, dev, data_size = sys.argv[1], sys.argv[2], int(sys.argv[3])
for line in open("/proc/%s/maps" % pid):
    f = line.split()
    if len(f) >= 6 and f[5] == dev:
        start, end = (int(x, 16) for x in f[0].split("-"))
        break
else:
    sys.exit("no mapping of " + dev)
n = 0
with open("/proc/%s/pagemap" % pid, "rb") as pm:
    pm.seek((end - data_size) // 4096 * 8)
    for (e,) in struct.iter_unpack("<Q", pm.read(data_size // 4096 * 8)):
        n += e >> 63
print(n)
EOF
present() { python3 /tmp/present.py "$runner" "/dev/$1" $((4 << 20)); }
# freed NAME: data pages find_free_blocks reported freeing from NAME.
freed() {
	klog | sed -n "s/.*Freed \([0-9]*\) pages .* from $1 queue [0-9]*\.\$/\1/p" |
		awk '{ s += $1 } END { print s + 0 }'
}
stop=/tmp/fixed-stop
rm -f $stop
fio_verify_loop "$fix_dev" 32M $stop > /tmp/fio-fix.log 2>&1 &
fio_fix=$!
fio_verify_loop "$def_dev" 32M $stop > /tmp/fio-def.log 2>&1 &
fio_def=$!
sleep 3
log "global_max_data_area_mb $old_gmax -> 1 under I/O (fix0 alone holds 4 MiB)"
echo 1 > $gmax
sleep 12
touch $stop
rc=0
wait $fio_fix || rc=$?
cat /tmp/fio-fix.log
expect_eq "$rc" 0 "fio write+verify on fix0 under reclaim"
wait $fio_def || rc=$?
cat /tmp/fio-def.log
expect_eq "$rc" 0 "fio write+verify on def0 under reclaim"
# Idle now: the next pass (every 5 s while fix0 keeps the count over the
# limit) frees all of def0's pages.
sleep 6
fix_p=$(present "$fix_uio") def_p=$(present "$def_uio")
passes=$(klog | grep -c "from def0 queue 0" || true)
sleep 11
fix_p2=$(present "$fix_uio") def_p2=$(present "$def_uio")
passes=$(( $(klog | grep -c "from def0 queue 0" || true) - passes ))
dmesg | grep -q "$KMSG_MARK" ||
	fail "the kernel log lost this scenario's start: flooded (a reclaim work that spins?)"
log "reclaim passes over the idle devices in 11 s: $passes"
# fix0 keeps the count over the limit: the work runs every 5 s, no more
# (a pass that requeues itself at once would spin: thousands).
if [ "$passes" -lt 1 ] || [ "$passes" -gt 6 ]; then
	fail "$passes reclaim passes in 11 s, expected 2 or 3"
fi
log "data pages tcmu-runner has mapped: fix0 $fix_p -> $fix_p2, def0 $def_p -> $def_p2;" \
	"pages freed by reclaim: fix0 $(freed fix0), def0 $(freed def0)"
[ "$(freed def0)" -gt 0 ] || fail "the reclaim never freed def0's pages (no pressure: the check proves nothing)"
expect_eq "$(freed fix0)" 0 "pages the reclaim freed from fix0"
klog | grep -q "from fix0 queue" && fail "find_free_blocks visited fix0: $(klog | grep "from fix0 queue" | tail -n1)"
expect_eq "$def_p2" 0 "def0: data pages still mapped after the idle reclaim (the check would see one)"
[ "$fix_p" -gt 0 ] || fail "tcmu-runner has none of fix0's data pages mapped"
expect_eq "$fix_p2" "$fix_p" "fix0: data pages mapped across two idle reclaim passes"
fio_write_verify "$fix_dev" 16M
echo "$old_gmax" > $gmax
remove_all_targets

# --- 4. tcmud with fixed buffers under the same pressure ---------------------
# tcmud registers a fixed device's data area as io_uring fixed buffers
# (READ_FIXED/WRITE_FIXED) and a default device's never. A page the reclaim
# replaced under a registered buffer would corrupt data silently (the
# daemon reads into the old page, the kernel returns the new one): fio's
# crc32c verify catches it.
kill "$runner" 2>/dev/null
wait "$runner" 2>/dev/null || true
mount_loop_ext4 fx 400
truncate -s 96M /mnt/fx/tfd.img /mnt/fx/tfb.img /mnt/fx/tdef.img
start_tcmud
echo "$old_gmax" > $gmax
tfd=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" USER_BACKSTORE_ATTRS="data_area_fixed=1" \
	create_user_backstore tfd file "/mnt/fx/tfd.img;direct=1" $((96 << 20)))
tfb=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" USER_BACKSTORE_ATTRS="data_area_fixed=1" \
	create_user_backstore tfb file /mnt/fx/tfb.img $((96 << 20)))
tdef=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" \
	create_user_backstore tdef file "/mnt/fx/tdef.img;direct=1" $((96 << 20)))
wait_listed tfd state serving
wait_listed tfb state serving
wait_listed tdef state serving
for n in tfd tfb; do
	grep -F "$n: queue 0: data area (4096 KiB) registered as io_uring fixed buffers" "$TCMUD_LOG" ||
		fail "tcmud did not register $n's data area: $(grep -F "$n:" "$TCMUD_LOG" | tail -n 3)"
done
if grep -F "tdef: queue 0: data area" "$TCMUD_LOG"; then fail "tcmud registered tdef's data area (no CAP_DATA_FIXED)"; fi
# The same, as an administrator reads it (0 also where the gauge is missing).
for n in tfd:1 tfb:1 tdef:0; do
	expect_eq "$(queue_metric "${n%:*}" 0 tcmud_queue_fixed_buffers)" "${n#*:}" \
		"tcmudctl metrics: ${n%:*}'s tcmud_queue_fixed_buffers"
done
tfd_dev=$(export_via_loop "$tfd")
tfb_dev=$(export_via_loop "$tfb")
tdef_dev=$(export_via_loop "$tdef")
log "tcmud disks: tfd (direct=1) $tfd_dev, tfb (direct=0) $tfb_dev, tdef (default, direct=1) $tdef_dev"
before_tdef=$(freed tdef)
rm -f $stop
names=(tfd tfb tdef) devs=("$tfd_dev" "$tfb_dev" "$tdef_dev") pids=()
for i in 0 1 2; do
	fio_verify_loop "${devs[i]}" 32M $stop > "/tmp/fio-${names[i]}.log" 2>&1 &
	pids+=($!)
done
sleep 3
log "global_max_data_area_mb $old_gmax -> 1 under tcmud's I/O (tfd and tfb hold 8 MiB)"
echo 1 > $gmax
sleep 15
touch $stop
for i in 0 1 2; do
	rc=0
	wait "${pids[i]}" || rc=$?
	cat "/tmp/fio-${names[i]}.log"
	expect_eq "$rc" 0 "fio write+verify on ${names[i]} under reclaim"
done
sleep 6
log "pages freed by reclaim: tfd $(freed tfd), tfb $(freed tfb), tdef $(( $(freed tdef) - before_tdef ))"
[ "$(( $(freed tdef) - before_tdef ))" -gt 0 ] || fail "the reclaim never freed tdef's pages (no pressure)"
klog | grep -q "from tf[db] queue" && fail "find_free_blocks visited a fixed device: $(klog | grep "from tf[db] queue" | tail -n1)"
for d in "$tfd_dev" "$tfb_dev"; do fio_write_verify "$d" 16M; done
echo "$old_gmax" > $gmax
remove_all_targets

errors=$(klog | grep -E 'ring is broken|not found, ring|Invalid addr to data page|tcmu.*(timed out|BUG)' |
	grep -v 'on device pdef ' || true)
[ -z "$errors" ] || fail "kernel ring errors: $errors"
log "kmod-fixed-data-area passed"
