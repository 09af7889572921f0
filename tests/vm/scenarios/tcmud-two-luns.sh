# SPDX-License-Identifier: GPL-2.0-or-later
# One tcmud serves two TCMU disks at once, each on its own backing file:
# concurrent checksummed write+verify on both, and each file holds only
# what was written to its own disk; tcmudctl lists both and shows each
# one's own statistics (see the end).
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 128M /tmp/a.img /tmp/b.img
a=$(export_via_loop "$(create_user_backstore diska file /tmp/a.img $((128 << 20)))")
b=$(export_via_loop "$(create_user_backstore diskb file /tmp/b.img $((128 << 20)))")
log "disks $a and $b"
fio_write_verify "$a" 32M & pa=$!
fio_write_verify "$b" 32M & pb=$!
wait $pa || fail "write+verify on $a"
wait $pb || fail "write+verify on $b"
# Distinct contents prove the disks were not crossed.
printf 'disk-a-marker' | dd of="$a" bs=512 seek=1000 conv=sync oflag=direct status=none
printf 'disk-b-marker' | dd of="$b" bs=512 seek=1000 conv=sync oflag=direct status=none
sync
expect_eq "$(dd if=/tmp/a.img bs=512 skip=1000 count=1 status=none | tr -d '\0')" disk-a-marker "a.img"
expect_eq "$(dd if=/tmp/b.img bs=512 skip=1000 count=1 status=none | tr -d '\0')" disk-b-marker "b.img"

# tcmudctl reads the running daemon: both devices listed with one queue each,
# then statistics while a randrw job runs on disk a only: a shows reads,
# writes and latencies, b (idle) none, so the counts are per device.
ctl="$TCMUD_BUILD/tools/tcmudctl/tcmudctl"
expect_eq "$(stat -c %a /run/tcmud/tcmud.sock)" 600 "control socket mode"
listing=$("$ctl" list) || fail "tcmudctl list"
log "tcmudctl list:"$'\n'"$listing"
expect_match "$listing" "diska +user_0 +uio[0-9]+ +file +134217728 +512 +1 serving +- +/tmp/a.img" "list diska"
expect_match "$listing" "diskb +user_0 +uio[0-9]+ +file +134217728 +512 +1 serving +- +/tmp/b.img" "list diskb"
expect_eq "$("$ctl" list --json | jq -c '[.devices[] | [.name, .nr_queues]] | sort')" \
	'[["diska",1],["diskb",1]]' "list --json"
fio --name=stats --filename="$a" --direct=1 --ioengine=libaio --iodepth=8 --rw=randrw \
	--bs=4k --size=32M --rate_iops=300 --time_based --runtime=60 --output=/dev/null & pf=$!
# fio takes a moment to start under emulation: 1 s reports until one shows
# it. fio is rate-limited so the emulated CPUs leave tcmudctl some time.
busy='.devices[] | select(.name == "diska") | .iops > 0 and .read_bytes_per_s > 0
	and .write_bytes_per_s > 0 and .latency_us.p50 > 0 and .latency_us["p99.9"] >= .latency_us.p50
	and .errors == 0 and (.queues | length) == 1 and .queues[0].iops == .iops'
log "fio started; waiting for a report that shows its I/O"
for i in $(seq 20); do
	stats=$("$ctl" stats --json --interval 1) || fail "tcmudctl stats --json"
	jq -e "$busy" <<<"$stats" >/dev/null && break
done
log "tcmudctl stats --json (report $i): $stats"
jq -e "$busy" <<<"$stats" >/dev/null || fail "diska statistics under fio: $stats"
jq -e '.devices[] | select(.name == "diskb") | .iops == 0' <<<"$stats" >/dev/null \
	|| fail "diskb statistics while idle: $stats"
table=$("$ctl" stats diska --interval 0.5) || fail "tcmudctl stats diska"
log "tcmudctl stats diska:"$'\n'"$table"
expect_match "$table" $'\ndiska +all +[1-9][0-9.]* ' "stats table under fio"
kill $pf
wait $pf || true
out=$("$ctl" --socket /run/tcmud/nothing.sock list 2>&1) && fail "tcmudctl without a daemon succeeded"
expect_eq "$out" "tcmudctl: cannot connect to /run/tcmud/nothing.sock: No such file or directory — is tcmud running?" "no-daemon message"
