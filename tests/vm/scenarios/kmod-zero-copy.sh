# SPDX-License-Identifier: GPL-2.0-or-later
# attrib/zero_copy (kmod patch 0013; needs --kmod): large READs mapped into
# the daemon instead of copied.
#  1. the attribute: 0 by default, 0 or 1 only, refused once the device is
#     enabled; a zero-copy device's mailbox has TCMU_MAILBOX_FLAG_CAP_ZERO_COPY
#     and a struct tcmu_zc_mailbox whose window ends the mapping, after a
#     data area of max_data_area_mb; a default device has neither, and its
#     map is what it always was; a window page no command owns is SIGBUS.
#  2. tcmud (file backstore, buffered) on a zero_copy=1 device: fio crc32c
#     write+verify with 128k I/O (whose verify READs take the window:
#     attrib/zero_copy_cmds grows by at least one per 128k read), with 4k
#     I/O and with 128k I/O from buffers 512 bytes into a page (neither
#     takes the window: the counter does not move), 128k I/O at 512-byte
#     disk offsets (whole-page buffers: the window), then all at once.
#  3. a command that times out: cmd_time_out 5 s, tcmud stopped (SIGSTOP)
#     under a 128k READ from sg_raw: the READ is answered with an error
#     within the timeout, not GOOD; tcmud continued (SIGCONT) serves the
#     expired command's late accesses (a copy behind the window) and later
#     I/O verifies; no oops, no WARN, no "ring is broken".
#  4. with data_area_fixed=1 too: tcmud registers only the data area as
#     io_uring fixed buffers (its size in the log is max_data_area_mb, not
#     the mapping's), and 128k reads still take the window and verify; a
#     direct=1 file on a zero_copy=1 device is refused by tcmud with a
#     reason (O_DIRECT cannot pin window pages).
#  5. stock tcmu-runner (user:qcow) on a zero_copy=1 device: fio write+verify
#     passes and READs took the window (it reads with the CPU).
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
load_target_stack
[ -e "$TARGET/core" ] || mkdir -p "$TARGET/core"
mark_kmsg kmod-zero-copy

# --- 1. the attribute and the mailbox -------------------------------------
a=$TARGET/core/user_0/zattr
mkdir -p "$a"
[ -e "$a/attrib/zero_copy" ] || fail "no attrib/zero_copy: not the 0013 build"
expect_eq "$(cat "$a/attrib/zero_copy")" 0 "zero_copy default"
if echo 2 > "$a/attrib/zero_copy" 2>/dev/null; then fail "zero_copy took 2"; fi
rmdir "$a"
ctl="nl_reply_supported=-1 max_data_area_mb=4"
USER_BACKSTORE_CONTROL=$ctl create_user_backstore zdef none x $((16 << 20)) > /dev/null
z=$(USER_BACKSTORE_CONTROL=$ctl USER_BACKSTORE_ATTRS="zero_copy=1" \
	create_user_backstore zon none x $((16 << 20)))
if echo 0 > "$z/attrib/zero_copy" 2>/dev/null; then fail "zero_copy changed on an enabled device"; fi
expect_eq "$(cat "$z/attrib/zero_copy")" 1 "zero_copy after a refused write"
expect_eq "$(cat "$z/attrib/zero_copy_cmds")" 0 "zero_copy_cmds of a new device"
klog | grep -q "Cannot set zero_copy after the device has been enabled" ||
	fail "no kernel message for the refused write"
cat > /tmp/zprobe.py <<'EOF'
# zprobe.py /dev/uioN MAP_SIZE: the mailbox's flags and window, then a read
# of the window's first page (no command owns it: SIGBUS kills us).
import mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
size = int(sys.argv[2], 0)
mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
_, flags, cmdr_off, cmdr_size = struct.unpack_from("<HHII", mm, 0)
woff, wsize = struct.unpack_from("<QQ", mm, 24)
print("flags 0x%x data_off %d window_off %d window_size %d map %d" %
      (flags, cmdr_off + cmdr_size, woff, wsize, size), flush=True)
if flags & (1 << 13):
    _ = mm[woff]
    print("window page read", flush=True)
EOF
uio_of() {
	local d
	for d in /sys/class/uio/uio*; do
		case $(cat "$d/name") in "tcm-user/"*"/$1/"*) echo "${d##*/}"; return ;; esac
	done
	fail "no uio device for $1"
}
zprobe() {
	local uio rc=0
	uio=$(uio_of "$1")
	python3 /tmp/zprobe.py "/dev/$uio" "$(cat "/sys/class/uio/$uio/maps/map0/size")" 2>&1 || rc=$?
	echo "rc $rc"
}
CAP_ZC=$((1 << 13)) MB4=$((4 << 20))
out=$(zprobe zdef)
log "zdef: $(echo "$out" | tr '\n' ' ')"
flags=$(sed -n 's/^flags \(0x[0-9a-f]*\) .*/\1/p' <<<"$out")
expect_eq "$((flags & CAP_ZC))" 0 "default device: CAP_ZERO_COPY"
read -r doff map < <(sed -n 's/.* data_off \([0-9]*\) .* map \([0-9]*\)$/\1 \2/p' <<<"$out")
expect_eq "$((map - doff))" $MB4 "default device: data area = rest of the map"
out=$(zprobe zon)
log "zon: $(echo "$out" | tr '\n' ' ')"
flags=$(sed -n 's/^flags \(0x[0-9a-f]*\) .*/\1/p' <<<"$out")
expect_eq "$((flags & CAP_ZC))" $CAP_ZC "zero-copy device: CAP_ZERO_COPY"
read -r doff woff wsize map < <(sed -n 's/.* data_off \([0-9]*\) window_off \([0-9]*\) window_size \([0-9]*\) map \([0-9]*\)$/\1 \2 \3 \4/p' <<<"$out")
expect_eq "$((woff - doff))" $MB4 "zero-copy device: data area before the window"
expect_eq "$wsize" $MB4 "zero-copy device: window size"
expect_eq "$((woff + wsize))" "$map" "zero-copy device: the window ends the map"
expect_eq "$(tail -n1 <<<"$out")" "rc 135" "read of an unowned window page (SIGBUS is 135)"
remove_all_targets
log "attribute, mailbox and window layout as documented"

# --- 2. tcmud: the window under fio write+verify -----------------------------
mount_loop_ext4 zc 700
truncate -s 256M /mnt/zc/z.img
start_tcmud
z=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" USER_BACKSTORE_ATTRS="zero_copy=1" \
	create_user_backstore z0 file /mnt/zc/z.img $((256 << 20)))
wait_listed z0 state serving
dev=$(export_via_loop "$z")
zc() { cat "$z/attrib/zero_copy_cmds"; }
# fio_job NAME SIZE ARGS...: write then verify (crc32c) SIZE of one
# region, O_DIRECT.
fio_job() {
	local name=$1 size=$2
	shift 2
	fio_checked "$name" "$size" --name="$name" --filename="$dev" --size="$size" \
		--direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --verify_backlog=0 "$@"
}
n0=$(zc)
fio_job big 32M --offset=0 --bs=128k
n1=$(zc)
log "128k write+verify: zero_copy_cmds $n0 -> $n1"
# 256 READs of 128 KiB (64 KiB commands if the initiator splits them)
[ $((n1 - n0)) -ge 256 ] || fail "128k verify READs took the window $((n1 - n0)) times, expected >= 256"
fio_job small 8M --offset=32M --bs=4k
fio_job unaligned_buf 16M --offset=48M --bs=128k --mem_align=512
n2=$(zc)
expect_eq "$n2" "$n1" "zero_copy_cmds after 4k I/O and 128k I/O from buffers 512 bytes into a page"
# Disk offsets that are not page multiples (the LBA is in the CDB; the
# buffers are whole pages): the window, and the data lands where it should.
# Sequential from 512 bytes past 64 MiB, so every block is 512 bytes off a
# page; random offsets would need blockalign=512, which turns off fio's
# random map: blocks overlap, and the verify reads back only the last
# writer of each (7,296 of 16,384 KiB in one run).
fio_job unaligned_off 16M --offset=$(((64 << 20) + 512)) --bs=128k --rw=write
n2b=$(zc)
[ "$n2b" -gt "$n2" ] || fail "128k READs at 512-byte disk offsets did not take the window"
n2=$n2b
# All at once, sizes mixed: window and copies side by side on one ring.
pids=()
fio_job mix1 16M --offset=96M --bsrange=4k-256k & pids+=($!)
fio_job mix2 16M --offset=128M --bs=128k & pids+=($!)
fio_job mix3 8M --offset=160M --bs=128k --mem_align=512 & pids+=($!)
fio_job mix4 4M --offset=176M --bs=4k & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || fail "mixed fio job failed"; done
n3=$(zc)
[ "$n3" -gt "$n2" ] || fail "the mixed run never took the window"
log "mixed write+verify passed; zero_copy_cmds $n2 -> $n3"

# --- 3. a command that times out ---------------------------------------------
# cmd_time_out is set before the LUN is exported (the kernel refuses it
# after), on a device of its own: 5 s would be short for fio under TCG.
truncate -s 64M /mnt/zc/t.img
z0=$z zdev=$dev
z=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" USER_BACKSTORE_ATTRS="zero_copy=1 cmd_time_out=5" \
	create_user_backstore zt0 file /mnt/zc/t.img $((64 << 20)))
wait_listed zt0 state serving
dev=$(export_via_loop "$z")
fio_job tfill 4M --offset=0 --bs=128k
sg=$(sg_of "$dev")
n3=$(zc)
kill -STOP "$TCMUD_PID"
t0=$(date +%s)
# READ(10) of 256 blocks (128 KiB) at LBA 2048: the sg driver's buffer is
# whole pages, so the command takes the window and its pages go back to
# the initiator at the timeout while tcmud still has the iovec.
sense=$(sg_raw -t 60 -r 131072 -o /tmp/zc.timeout.out "$sg" 28 00 00 00 08 00 00 01 00 00 2>&1 || true)
took=$(($(date +%s) - t0))
log "READ with tcmud stopped, cmd_time_out 5 s: answered in ${took} s: $(echo "$sense" | tr '\n' ' ' | cut -c1-200)"
n4=$(zc)
kill -CONT "$TCMUD_PID"
[ "$n4" -gt "$n3" ] || fail "the timed-out READ did not take the window"
[ "$took" -lt 40 ] || fail "the READ was not timed out by the kernel (${took} s)"
[[ $sense =~ [Gg]ood ]] && fail "a timed-out READ was reported GOOD"
sleep 2
kill -0 "$TCMUD_PID" || fail "tcmud died after the timeout (a late access to the window?)"
fio_job after 8M --offset=0 --bs=128k
z=$z0 dev=$zdev
fio_job after0 16M --offset=0 --bs=128k
log "after the timeout: tcmud alive, 128k write+verify passed on both devices"
remove_all_targets

# --- 4. with data_area_fixed, and refused with O_DIRECT ----------------------
truncate -s 64M /mnt/zc/f.img /mnt/zc/d.img
f=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" USER_BACKSTORE_ATTRS="zero_copy=1 data_area_fixed=1" \
	create_user_backstore zf0 file /mnt/zc/f.img $((64 << 20)))
wait_listed zf0 state serving
grep -F "zf0: queue 0: data area (4096 KiB) registered as io_uring fixed buffers" "$TCMUD_LOG" ||
	fail "tcmud did not register zf0's data area alone: $(grep -F "zf0:" "$TCMUD_LOG" | tail -n 3)"
dev=$(export_via_loop "$f")
z=$f
n0=$(zc)
fio_job fixed 16M --offset=0 --bsrange=4k-128k
[ "$(zc)" -gt "$n0" ] || fail "zf0: READs never took the window"
log "zero_copy with data_area_fixed: data area registered, window used ($n0 -> $(zc)), verify passed"
# tcmud refuses the device: its netlink reply fails the enable.
if (USER_BACKSTORE_CONTROL="max_data_area_mb=4" USER_BACKSTORE_ATTRS="zero_copy=1" \
	create_user_backstore zd0 file "/mnt/zc/d.img;direct=1" $((64 << 20))) > /dev/null 2>&1; then :; fi
for _ in $(seq "$(scaled 50)"); do
	grep -q "zero_copy=1 maps large READs into a window O_DIRECT cannot use" "$TCMUD_LOG" && break
	sleep 0.1
done
grep -q "zero_copy=1 maps large READs into a window O_DIRECT cannot use" "$TCMUD_LOG" ||
	fail "tcmud did not refuse direct=1 on a zero-copy device: $(grep -F "zd0" "$TCMUD_LOG" | tail -n 3)"
[ "$(listed zd0 state)" != serving ] || fail "tcmud serves zd0 (direct=1, zero_copy=1)"
remove_all_targets
kill "$TCMUD_PID" 2>/dev/null
wait "$TCMUD_PID" 2>/dev/null || true

# --- 5. stock tcmu-runner on a zero-copy device --------------------------------
mkdir -p /etc/tcmu /var/log/tcmu
tcmu-runner -l /var/log/tcmu &
runner=$!
stop_on_exit $runner
for _ in $(seq "$(scaled 100)"); do
	kill -0 $runner || fail "tcmu-runner did not start"
	klog | grep -q "tcmu daemon: command reply support 1" &&
		[ "$(cat /sys/module/target_core_user/parameters/block_netlink)" = 0 ] && break
	sleep 0.1
done
truncate -s 64M /tmp/zr.img
z=$(USER_BACKSTORE_CONTROL="max_data_area_mb=4" USER_BACKSTORE_ATTRS="zero_copy=1" \
	create_user_backstore zr0 qcow /tmp/zr.img $((64 << 20)))
dev=$(export_via_loop "$z")
n0=$(zc)
fio_job runner 12M --offset=0 --bsrange=4k-128k
[ "$(zc)" -gt "$n0" ] || fail "tcmu-runner: READs never took the window"
log "tcmu-runner on zero_copy=1: write+verify passed, window used ($n0 -> $(zc))"
remove_all_targets

errors=$(klog | grep -E 'ring is broken|not found, ring|Invalid addr|BUG|WARNING|Oops|general protection' |
	grep -v 'window page .* on device zon ' || true)
[ -z "$errors" ] || fail "kernel errors: $errors"
log "kmod-zero-copy passed"
