# SPDX-License-Identifier: GPL-2.0-or-later
# The whole cluster (mon and OSD) stops under I/O to an rbd backstore and
# comes back: while it is gone a write ends with CHECK CONDITION within the
# configured osd_op_timeout (never a silent success, never a hang past the
# kernel's cmd_time_out), fio's writes fail rather than hang; once it is
# back the device serves again, without a tcmud restart, and every write
# acknowledged before, during or after the outage reads back intact.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
need_ceph
need_tcmud_rbd
load_target_stack
start_tcmud
op_timeout=5
ack="python3 $TCMUD_SRC/tests/vm/guest/ack-io.py"
rbd_image outage0 64M
bs=$(create_user_backstore outage0 rbd "$(rbd_cfg outage0 "osd_op_timeout=$op_timeout")" $((64 << 20)))
dev=$(export_via_loop "$bs")
sg=$(sg_of "$dev")
log "tcmud rbd disk is $dev, osd_op_timeout $op_timeout s"
rm -f /tmp/outage.acked
out=$($ack write "$dev" 0 32 /tmp/outage.acked)
expect_match "$out" "^acked 32 failed 0" "writes before the outage"

# fio writing when the cluster goes: it must end, with errors, not hang.
fio --name=outage --filename="$dev" --direct=1 --ioengine=libaio --iodepth=8 \
	--rw=randwrite --bs=4k --offset=32M --size=16M --time_based --runtime=600 \
	--output=/tmp/outage.fio 2>/tmp/outage.fio.err &
fio_pid=$!
sleep 2
kill -0 $fio_pid || fail "fio ended before the outage"
host_ceph testbed stop all || fail "could not stop the cluster"
stopped=$(date +%s)
log "cluster stopped under fio"

# One write straight to the sg node (no block-layer retries): its status.
head -c 512 /dev/urandom > /tmp/blk
start=$(date +%s%N)
set +e
sense=$(timeout 120 sg_raw -s 512 -i /tmp/blk "$sg" 2a 00 00 00 20 00 00 00 01 00 2>&1)
rc=$?
set -e
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -ne 124 ] || fail "a write to the stopped cluster hung for 120 s"
expect_match "$sense" "SCSI Status: Check Condition" "status of a write to the stopped cluster"
log "write to the stopped cluster: CHECK CONDITION after $ms ms: $(echo "$sense" | grep -iE 'sense key|asc|additional' | tr '\n' ' ')"
[ $ms -le $(((op_timeout + 25) * 1000)) ] ||
	fail "the write took $ms ms, more than osd_op_timeout ($op_timeout s) plus 25 s"
for _ in $(seq "$(scaled 120)"); do kill -0 $fio_pid 2>/dev/null || break; sleep 1; done
kill -0 $fio_pid 2>/dev/null && fail "fio still running $(($(date +%s) - stopped)) s into the outage"
wait $fio_pid && fail "fio saw no error with the cluster stopped"
log "fio during the outage ended after $(($(date +%s) - stopped)) s:" \
	"$(grep -o 'error on file [^:]*: [^:]*' /tmp/outage.fio.err | sort | uniq -c | tr -s ' \n' ' ')"

host_ceph testbed start all || fail "could not start the cluster"
log "cluster back after $(($(date +%s) - stopped)) s"
out=""
for _ in $(seq "$(scaled 30)"); do
	out=$($ack write "$dev" 64 1 /tmp/outage.acked)
	[[ $out =~ ^acked\ 1 ]] && break
	sleep 1
done
expect_match "$out" "^acked 1 failed 0" "the first write after the cluster came back"
out=$($ack write "$dev" 65 31 /tmp/outage.acked)
expect_match "$out" "^acked 31 failed 0" "writes after the outage"
kill -0 "$TCMUD_PID" || fail "tcmud died"
expect_eq "$(grep -c 'ready, serving' "$TCMUD_LOG")" 1 "tcmud starts (no restart)"
out=$($ack verify "$dev" /tmp/outage.acked)
log "after the outage: $out"
fio_write_verify "$dev" 8M
