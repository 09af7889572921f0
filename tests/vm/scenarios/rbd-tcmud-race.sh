# SPDX-License-Identifier: GPL-2.0-or-later
# Two gateways, one image: tcmud in the guest serves race0 and holds its
# exclusive lock; a host-side librbd client takes the image over the way a
# failing-over gateway does (`rbd lock rm`: break the lock, blocklist its
# owner) and writes. From then on tcmud's writes fail with a clear sense
# instead of reaching the image: the host's data stays as the host wrote
# it, and every write tcmud acknowledged before the takeover is intact.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
need_ceph
need_tcmud_rbd
load_target_stack
start_tcmud
ack="python3 $TCMUD_SRC/tests/vm/guest/ack-io.py"
image=$TCMUD_CEPH_POOL/race0
rbd_image race0 64M
dev=$(export_via_loop "$(create_user_backstore race0 rbd "$(rbd_cfg race0)" $((64 << 20)))")
sg=$(sg_of "$dev")
# Blocks 256-287 (1 MiB on): the guest's, acknowledged before the takeover.
rm -f /tmp/race.acked
out=$($ack write "$dev" 256 32 /tmp/race.acked)
expect_match "$out" "^acked 32 failed 0" "tcmud's writes while it owns the lock"

lock=$(host_ceph rbd lock ls --format json "$image")
# The lock's id has a space in it ("auto <cookie>").
IFS=$'\t' read -r id locker < <(python3 -c 'import json, sys
l = json.loads(sys.argv[1])
l = l if isinstance(l, list) else list(l.values())
print(l[0]["id"], l[0]["locker"], sep="\t")' "$lock") || fail "no lock on $image: $lock"
log "tcmud's lock: $locker ($id); the host breaks it and writes"
host_ceph rbd lock rm "$image" "$id" "$locker" || fail "rbd lock rm"
# The host writes the first MiB (blocks 0-255) as the new owner.
host_ceph rbd bench --io-type write --io-pattern seq --io-size 64K --io-threads 1 \
	--io-total 1M --rbd-cache=false "$image" | tail -1 || fail "the host's writes"
host_sum=$(image_md5 race0 0 $((1 << 20)))
log "host wrote blocks 0-255: $host_sum; locks: $(host_ceph rbd lock ls "$image" | tr '\n' ' ')"

# tcmud's writes now: one through sg (its sense), then through the block layer.
head -c 512 /dev/urandom > /tmp/blk
set +e
sense=$(timeout 120 sg_raw -s 512 -i /tmp/blk "$sg" 2a 00 00 00 00 00 00 00 01 00 2>&1)
rc=$?
set -e
[ $rc -ne 124 ] || fail "tcmud's write after the takeover hung"
expect_match "$sense" "SCSI Status: Check Condition" "status of tcmud's write after the takeover"
log "tcmud's write after the takeover: $(echo "$sense" | grep -iE 'sense key|asc|additional' | tr '\n' ' ')"
expect_match "$sense" "Not Ready|Data Protect" "sense key of tcmud's write after the takeover"
out=$(timeout 300 python3 "$TCMUD_SRC/tests/vm/guest/ack-io.py" write "$dev" 0 8 /tmp/race.lost)
log "block-layer writes after the takeover: $out"
expect_match "$out" "^acked 0 failed 8" "tcmud's writes after the takeover"

expect_eq "$(image_md5 race0 0 $((1 << 20)))" "$host_sum" "the host's blocks after tcmud's attempts"
expect_eq "$(image_md5 race0 $((256 << 12)) $((32 << 12)))" "$(ack_md5 256 32)" \
	"tcmud's blocks acknowledged before the takeover"
log "the image verifies: the host's MiB as written, tcmud's 32 acknowledged blocks intact"
kill -0 "$TCMUD_PID" || fail "tcmud died"
grep -E "race0.*(lock|blocklist|fenced)" "$TCMUD_LOG" | tail -3 || true
