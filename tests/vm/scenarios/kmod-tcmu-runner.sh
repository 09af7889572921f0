# SPDX-License-Identifier: GPL-2.0-or-later
# Compatibility: Debian's stock tcmu-runner, unchanged, on our patched uio.ko
# and target_core_user.ko with the default attrib/nr_queues=1, then on a
# device with nr_queues=4 (every command must reach queue 0, the only one it
# serves: kmod patch 0019). Runs the tcmu-runner scenario's checks after
# proving the patched modules are live.
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

# Stock tcmu-runner knows nothing of queues: on a device with nr_queues=4 it
# opens queue 0's uio device only. The kernel must then steer every command
# to queue 0, whichever CPU submits it; a command put on a queue nobody
# serves waits there until cmd_time_out (5 s here) fails it. fio jobs on
# every vCPU write and verify; the tcmu-runner log and the kernel must show
# no error and no timed-out command.
truncate -s 64M /tmp/raw1.img
bs1=$(USER_BACKSTORE_ATTRS="nr_queues=4 cmd_time_out=5" \
	create_user_backstore raw1 qcow /tmp/raw1.img $((64 << 20))) ||
	fail "no nr_queues=4 device for tcmu-runner"
expect_eq "$(cat "$bs1/attrib/nr_queues")" 4 "raw1 attrib/nr_queues"
dev1=$(export_via_loop "$bs1")
log "tcmu-runner disk with nr_queues=4 is $dev1"
jobs=$((2 * $(nproc)))
fio_checked "nr_queues=4 write+verify, $jobs jobs on every CPU" $((8 * jobs))M --name=mq4 \
	--filename="$dev1" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
	--bsrange=4k-64k --numjobs="$jobs" --size=8M --offset_increment=8M --cpus_allowed="0-$(($(nproc) - 1))" \
	--cpus_allowed_policy=split --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--group_reporting
errors=$(dmesg | sed -n '/tcmud-vm: scenario kmod-tcmu-runner start/,$p' |
	grep -iE 'tcmu.*(timed out|time out|broken)|I/O error|sd .*(FAILED|timing out)' || true)
[ -z "$errors" ] || fail "kernel errors with nr_queues=4 under tcmu-runner: $errors"
log "tcmu-runner served a nr_queues=4 device: every command on queue 0"
