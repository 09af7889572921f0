# SPDX-License-Identifier: GPL-2.0-or-later
# A user: backstore created while no tcmud runs, after a daemon has run once
# since the module was loaded (so the kernel waits for netlink replies):
# its configfs enable blocks until some daemon answers ADDED_DEVICE, and the
# event went to nobody. The next tcmud finds it by scan with enable still 0,
# serves it without a take-over and sends the reply itself: the enable
# returns 0 and the disk serves write+verify. A device whose backing file is
# missing gets the refusal as its answer: its enable fails instead of
# hanging. (Without the reply the enable blocks forever: the kernel's wait
# has no timeout.)
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud        # announces reply support: sticky for the module's life
kill -TERM "$TCMUD_PID"
wait "$TCMUD_PID" || fail "tcmud did not stop cleanly"

truncate -s 64M /tmp/late.img
(create_user_backstore late file /tmp/late.img $((64 << 20)) > /tmp/late.dir) &
good=$!
bad_dir=$TARGET/core/user_0/missing
mkdir -p "$bad_dir"
echo "dev_config=file//tmp/no-such.img" > "$bad_dir/control"
echo "dev_size=$((64 << 20))" > "$bad_dir/control"
(echo 1 > "$bad_dir/enable") 2>/tmp/missing.err &
bad=$!
sleep 3
kill -0 $good 2>/dev/null || fail "enable of 'late' returned with no daemon running"
kill -0 $bad 2>/dev/null || fail "enable of 'missing' returned with no daemon running"
log "both enables wait for a daemon"

start_tcmud
for _ in $(seq 100); do
	kill -0 $good 2>/dev/null || kill -0 $bad 2>/dev/null || break
	sleep 0.2
done
kill -0 $good 2>/dev/null && fail "enable of 'late' still blocked after tcmud started"
kill -0 $bad 2>/dev/null && fail "enable of 'missing' still blocked after tcmud started"
wait $good || fail "enable of 'late' failed"
if wait $bad; then fail "enable of 'missing' succeeded without a backing file"; fi
log "enable of 'missing' failed as it should: $(cat /tmp/missing.err)"
wait_listed late state serving
expect_eq "$(listed missing name)" "" "missing listed by tcmudctl"
grep -q "late: taken over" "$TCMUD_LOG" && fail "a never-served device was taken over"
expect_eq "$(cat "$(cat /tmp/late.dir)/enable")" 1 "late enabled"
expect_eq "$(cat "$bad_dir/enable")" 0 "missing not enabled"
rmdir "$bad_dir"
dev=$(export_via_loop "$(cat /tmp/late.dir)")
fio_write_verify "$dev" 16M
