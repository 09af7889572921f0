# SPDX-License-Identifier: GPL-2.0-or-later
# Two gateways, one image: tcmud in the guest serves race0 and holds its
# exclusive lock; the host takes the image over the way a failing-over
# gateway does (`rbd lock rm`: break the lock, blocklist its owner) and a
# host-side librbd client (rbd_lock_holder, through the agent's "hold")
# takes the lock and writes. From then on tcmud's writes fail with a clear
# sense instead of reaching the image: the host's data stays as the host
# wrote it, and every write tcmud acknowledged before the takeover is
# intact. Meanwhile tcmud reopens the image with a fresh client and waits
# in standby; once the host releases the image, tcmud takes the lock and
# serves writes again without a restart, and they verify on the host.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
need_ceph
need_tcmud_rbd
load_target_stack
start_tcmud
ack="python3 $TCMUD_SRC/tests/vm/guest/ack-io.py"
# wait_for WHAT SECONDS CMD...: until CMD succeeds, polled twice a second.
wait_for() {
	local what=$1 limit=$2
	shift 2
	for _ in $(seq $((limit * 2))); do "$@" && return 0; sleep 0.5; done
	fail "$what: not within $limit s"
}
ctl="$TCMUD_BUILD/tools/tcmudctl/tcmudctl"
# race0 as tcmudctl list shows it: state, lock owner, 1 if that is this
# gateway, reopens.
race_status() {
	"$ctl" list --json | python3 -c 'import json, sys
d = [d for d in json.load(sys.stdin)["devices"] if d["name"] == "race0"][0]
print(d["state"], d.get("lock_owner", "-"), int(d.get("lock_owner_is_us", False)), d["reopens"])'
}
# The lock's holder as the cluster reports it (rbd lock ls): "ID<tab>LOCKER<tab>ADDRESS".
lock_holder() {
	python3 -c 'import json, sys
l = json.loads(sys.argv[1])
l = l if isinstance(l, list) else list(l.values())
print(l[0]["id"], l[0]["locker"], l[0]["address"], sep="\t")' "$(host_ceph rbd lock ls --format json "$image")"
}
race_state_is() { [ "$(race_status | cut -d' ' -f1)" = "$1" ]; }
image=$TCMUD_CEPH_POOL/race0
rbd_image race0 64M
dev=$(export_via_loop "$(create_user_backstore race0 rbd "$(rbd_cfg race0)" $((64 << 20)))")
sg=$(sg_of "$dev")
# Blocks 256-287 (1 MiB on): the guest's, acknowledged before the takeover.
rm -f /tmp/race.acked
out=$($ack write "$dev" 256 32 /tmp/race.acked)
expect_match "$out" "^acked 32 failed 0" "tcmud's writes while it owns the lock"

# The lock's id has a space in it ("auto <cookie>").
IFS=$'\t' read -r id locker address < <(lock_holder) || fail "no lock on $image"
# What an operator sees: this gateway owns the lock, named as the cluster names it.
read -r st owner us reopens <<<"$(race_status)"
expect_eq "$st $us $reopens" "owner 1 0" "tcmudctl list: race0's state, lock owner is us, reopens"
expect_eq "$owner" "$address" "tcmudctl list: race0's lock owner (rbd lock ls: $locker)"
log "tcmud's lock: $locker ($id) at $address; the host breaks it and writes"
host_ceph rbd lock rm "$image" "$id" "$locker" || fail "rbd lock rm"
# The host, as the new owner, holds the lock and writes the first MiB
# (blocks 0-255).
host_ceph hold "$image" $((1 << 20)) || fail "the host's gateway could not take the lock"
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

# tcmud reopens with a fresh client (standby: the host holds the lock).
wait_for "tcmud reopening race0" "$(scaled 60)" grep -q "race0.*reopened" "$TCMUD_LOG"
log "$(grep -E "race0.*reopened" "$TCMUD_LOG" | tail -1)"
# tcmudctl and the metrics say so: standby behind the host's client, one reopen.
wait_for "tcmudctl showing race0 in standby" "$(scaled 10)" race_state_is standby
IFS=$'\t' read -r _ host_locker host_address < <(lock_holder)
read -r st owner us reopens <<<"$(race_status)"
expect_eq "$us $reopens" "0 1" "tcmudctl list in standby: lock owner is us, reopens"
expect_eq "$owner" "$host_address" "tcmudctl list in standby: the lock owner (the host's $host_locker)"
metrics=$("$ctl" metrics)
expect_match "$metrics" 'tcmud_device_state\{device="race0",hba="[^"]*",state="standby"\} 1' \
	"tcmud_device_state in standby"
expect_match "$metrics" 'tcmud_device_state\{device="race0",hba="[^"]*",state="owner"\} 0' \
	"tcmud_device_state owner in standby"
expect_match "$metrics" 'tcmud_device_reopens_total\{device="race0",hba="[^"]*"\} 1' \
	"tcmud_device_reopens_total"
log "tcmudctl: race0 $st, lock held by $owner ($host_locker)"
# The host hands the image back; tcmud takes the lock by itself and its
# writes (blocks 512-543) go through and land, without a restart.
host_ceph release "$image" || fail "the host's gateway did not release the image"
wait_for "tcmud taking the lock back" "$(scaled 30)" \
	grep -q "race0.*exclusive lock on .* acquired" "$TCMUD_LOG"
read -r st owner us reopens <<<"$(race_status)"
expect_eq "$st $us" "owner 1" "tcmudctl list after taking the lock back"
IFS=$'\t' read -r _ _ address < <(lock_holder)
expect_eq "$owner" "$address" "tcmudctl list: the lock owner after taking it back"
rm -f /tmp/race.after
out=$(timeout 300 python3 "$TCMUD_SRC/tests/vm/guest/ack-io.py" write "$dev" 512 32 /tmp/race.after)
expect_match "$out" "^acked 32 failed 0" "tcmud's writes after the host released the image"
expect_eq "$(image_md5 race0 $((512 << 12)) $((32 << 12)))" "$(ack_md5 512 32)" \
	"tcmud's blocks written after the reopen, as the cluster holds them"
expect_eq "$(image_md5 race0 0 $((1 << 20)))" "$host_sum" "the host's blocks at the end"
expect_eq "$(image_md5 race0 $((256 << 12)) $((32 << 12)))" "$(ack_md5 256 32)" \
	"tcmud's blocks from before the takeover, at the end"
kill -0 "$TCMUD_PID" || fail "tcmud died"
grep -E "race0.*(lock|blocklist|FENCED|reopen)" "$TCMUD_LOG" | tail -6 || true
