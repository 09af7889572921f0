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

# wait_metric METRIC COUNT: until rr0's queue 0 counter METRIC (tcmudctl
# metrics) reaches COUNT, at most 30 s. State, not log wording.
wait_metric() {
	local got=0
	for _ in $(seq "$(scaled 300)"); do
		got=$(queue_metric rr0 0 "$1")
		[ "$got" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "tcmudctl metrics: rr0 $1 is $got, want $2"
}
expect_eq "$(queue_metric rr0 0 tcmud_ring_resets_total)" 0 "ring resets before any"

echo 1 > "$bs/action/reset_ring"
dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none
wait_metric tcmud_ring_resets_total 1
expect_eq "$(queue_metric rr0 0 tcmud_malformed_entries_total)" 0 \
	"malformed entries after the kernel's reset"
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
# The misaligned head is refused (a malformed entry: the ring stops), then
# tcmud's own reset is the second one.
wait_metric tcmud_ring_resets_total 2
[ "$(queue_metric rr0 0 tcmud_malformed_entries_total)" -ge 1 ] || fail "the ring never broke"
fio_write_verify "$dev" 4M
kill -0 "$TCMUD_PID" || fail "tcmud died"
