# SPDX-License-Identifier: GPL-2.0-or-later
# Ring resets on the stock kernel (issue 14 F2). An administrator's
# action/reset_ring on a served device: tcmud notices (cmd_tail moved) and
# serves from the ring's start instead of re-reading stale entries. A ring
# whose framing breaks (cmd_head misaligned in tcmud's own mapping, through
# /proc/PID/mem) is reset by tcmud itself (block_dev, reset_ring, unblock)
# and served again; the command caught in it is retried (BUSY). Written
# data verifies after each.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 64M /tmp/ring-reset.img
bs=$(create_user_backstore rr0 file /tmp/ring-reset.img $((64 << 20)))
dev=$(export_via_loop "$bs")
fio_write_verify "$dev" 4M

# wait_log PATTERN COUNT: until the tcmud log holds COUNT such lines (30 s).
wait_log() {
	for _ in $(seq 300); do
		[ "$(grep -c "$1" "$TCMUD_LOG" || true)" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "tcmud log: no '$1' (want $2)"
}

echo 1 > "$bs/action/reset_ring"
dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none
wait_log "the kernel reset the ring" 1
fio_write_verify "$dev" 4M

uio=$(grep -l "/rr0/" /sys/class/uio/uio*/name | head -1 | xargs dirname | xargs basename)
[ -n "$uio" ] || fail "no uio device for rr0"
python3 - "$TCMUD_PID" "/dev/$uio" <<'PY' || fail "cannot poke the ring"
import struct, sys
pid, dev = sys.argv[1], sys.argv[2]
start = None
for line in open(f"/proc/{pid}/maps"):
    if line.split()[-1] == dev:
        start = int(line.split("-")[0], 16)
        break
if start is None:
    sys.exit(f"no mapping of {dev} in tcmud")
with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
    mem.seek(start + 12)  # tcmu_mailbox.cmd_head
    head = struct.unpack("<I", mem.read(4))[0]
    mem.seek(start + 12)
    mem.write(struct.pack("<I", head + 4))
print(f"cmd_head {head} -> {head + 4}")
PY
dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none \
	|| fail "the read caught in the broken ring failed"
wait_log "broken ring reset" 1
fio_write_verify "$dev" 4M
kill -0 "$TCMUD_PID" || fail "tcmud died"
grep -q "ring stopped" "$TCMUD_LOG" || fail "the ring never broke"
