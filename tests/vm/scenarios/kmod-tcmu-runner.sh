# SPDX-License-Identifier: GPL-2.0-or-later
# Compatibility: Debian's stock tcmu-runner, unchanged, on our patched uio.ko
# and target_core_user.ko with the default attrib/nr_queues=1. Runs the
# tcmu-runner scenario's checks after proving the patched modules are live.
# Needs --kmod (a run without it fails: it would test the stock modules).
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
load_target_stack
for m in uio target_core_user; do
	live=$(od -An -tx1 "/sys/module/$m/notes/.note.gnu.build-id" | tr -d ' \n')
	want=$(readelf -n "$TCMUD_KMOD/$m.ko" | sed -n 's/.*Build ID: //p')
	expect_match "$live" "$want\$" "$m build-id (live vs --kmod)"
done
grep -q nr_queues <(ls "$TARGET"/core 2>/dev/null; modinfo -F parm "$TCMUD_KMOD/target_core_user.ko"; strings "$TCMUD_KMOD/target_core_user.ko") ||
	fail "target_core_user.ko from --kmod is not the multi-queue build"
log "patched uio and target_core_user are live"
. "$TCMUD_SRC/tests/vm/scenarios/tcmu-runner-lun.sh"
mq=$(cat "$TARGET"/core/user_0/raw0/attrib/nr_queues)
expect_eq "$mq" 1 "attrib/nr_queues default"
# More than 64 commands on the ring at once (kmod patch 0010: a queue's
# command ids come from a table of 64 that doubles when every id is taken;
# the ids show in queue_cmd_ring's debug line) while fio writes and
# verifies: the table grows under load and every id finds its command.
echo "module target_core_user func queue_cmd_ring +p" > /proc/dynamic_debug/control
fio_checked "write+verify at iodepth 128" 16M --name=ids --filename="$dev" --size=16M \
	--direct=1 --ioengine=libaio --iodepth=128 --iodepth_batch_submit=128 --rw=randwrite \
	--bs=4k --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_backlog=0 &
fio_pid=$!
# tcmu-runner stopped for a moment: the ring fills up to the queue depth
# whatever the relative speeds, so the ids pass 64 every time.
sleep 1
kill -STOP "$runner"
sleep 3
kill -CONT "$runner"
wait "$fio_pid" || fail "fio write+verify at iodepth 128"
echo "module target_core_user func queue_cmd_ring -p" > /proc/dynamic_debug/control
max=$(dmesg | sed -n 's/.*allocated cmd id \([0-9]*\) for cmd.*/\1/p' | sort -n | tail -1)
[ "${max:-0}" -gt 64 ] ||
	fail "never more than 64 commands on the ring (highest cmd id ${max:-none})"
log "iodepth 128 write+verify passed, cmd ids up to $max"
