# SPDX-License-Identifier: GPL-2.0-or-later
# Device lifecycle with tcmud on the stock kernel:
# 1. tcmud killed with SIGKILL ten times, at random points, under write+verify
#    passes that run until the last restart: each restart takes the device
#    over (block_dev, reset_ring, unblock; its own "taken over" line);
#    commands the dead daemon left unanswered complete with BUSY and are
#    retried, so fio sees no error and every block verifies.
# 2. Removing a disk under I/O: the LUN and backstore go away while fio runs;
#    fio fails (its disk is gone: ENODEV, and ENOSPC for writes issued once
#    the dying disk's capacity is 0, from the block layer, see
#    docs/daemon.md), tcmud releases the device and lives on.
# 3. Twelve devices created at once, in parallel: every one is served.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 128M /tmp/life.img
bs=$(create_user_backstore life0 file /tmp/life.img $((128 << 20)))
# Long enough that a kernel command timeout never fires while tcmud restarts
# (settable only while the device has no export).
echo 60 > "$bs/attrib/cmd_time_out"
dev=$(export_via_loop "$bs")

log "1: SIGKILL x10 under write+verify"
fio_verify_loop "$dev" 16M /tmp/life.stop & fio_pid=$!
kill_and_restart_tcmud 10 life0 $fio_pid
touch /tmp/life.stop
wait $fio_pid || fail "fio saw an error across 10 daemon kills"
log "fio write+verify survived 10 SIGKILLs"

log "2: removal under I/O"
fio --name=busy --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
	--rw=randrw --bs=4k --time_based --runtime=60 --output=/dev/null 2>/tmp/busy.err & busy=$!
sleep 3
# Seen once in five runs: this fio could not start ("you need to specify
# size=", i.e. it found no $dev) right after part 1, and the removal then
# ran without I/O. Logged, not failed, until its cause is known.
kill -0 $busy 2>/dev/null || log "WARNING: fio had ended before the removal:" \
	"$(tr '\n' ' ' </tmp/busy.err) $(ls -l "$dev" 2>&1)"
remove_all_targets
wait $busy && fail "fio kept running on a removed disk"
log "fio on the removed disk:$(grep -o 'error on file [^:]*: [^:]*' /tmp/busy.err | sort | uniq -c | tr -s ' \n' ' ')"
wait_listed life0 name ""  # released: tcmud no longer serves it
kill -0 "$TCMUD_PID" || fail "tcmud died when its disk was removed under I/O"

log "3: twelve devices at once"
creators=()
for i in $(seq 1 12); do
	truncate -s 16M "/tmp/many$i.img"
	create_user_backstore "many$i" file "/tmp/many$i.img" $((16 << 20)) >/dev/null &
	creators+=($!)
done
for pid in "${creators[@]}"; do wait "$pid" || fail "a parallel device creation failed"; done
served=$("$TCMUDCTL" list --json |
	jq '[.devices[] | select((.name | test("^many[0-9]+$")) and .state == "serving")] | length')
expect_eq "$served" 12 "devices served (tcmudctl list)"
for i in $(seq 1 12); do
	expect_eq "$(cat "$TARGET/core/user_0/many$i/enable")" 1 "many$i enabled"
done
dev=$(export_via_loop $TARGET/core/user_0/many12)
fio_write_verify "$dev" 8M
