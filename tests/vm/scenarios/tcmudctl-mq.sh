# SPDX-License-Identifier: GPL-2.0-or-later
# tcmudctl on the patched modules (run with --kmod): a device with
# nr_queues=2 is listed with 2 queues, and while fio runs one job on CPU 0
# and one on CPU 1 (the kernel steers CPU c to queue c % 2), stats shows
# both queues doing I/O and the device row as their sum.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "needs the patched modules (tests/vm/run --kmod DIR)"
[ "$(nproc)" -ge 2 ] || skip "needs at least 2 vCPUs"
load_target_stack
start_tcmud
ctl="$TCMUD_BUILD/tools/tcmudctl/tcmudctl"
truncate -s 64M /tmp/ctlmq.img
bs=$(USER_BACKSTORE_ATTRS="nr_queues=2" create_user_backstore ctlmq file /tmp/ctlmq.img $((64 << 20)))
dev=$(export_via_loop "$bs")
expect_eq "$("$ctl" list --json | jq -c '[.devices[] | [.name, .nr_queues]]')" '[["ctlmq",2]]' \
	"list --json"
fio --name=ctlmq --filename="$dev" --direct=1 --ioengine=libaio --iodepth=4 --rw=randread \
	--bs=4k --size=64M --numjobs=2 --cpus_allowed=0,1 --cpus_allowed_policy=split --rate_iops=200 \
	--time_based --runtime=60 --output=/dev/null & pf=$!
# fio takes a moment to start under emulation: 1 s reports until one shows
# it. fio is rate-limited so the emulated CPUs leave tcmudctl some time.
busy='.devices | length == 1 and (.[0] | (.queues | length) == 2
	and .queues[0].iops > 0 and .queues[1].iops > 0
	and .queues[0].read_bytes_per_s > 0 and .queues[1].read_bytes_per_s > 0
	and .queues[0].commands + .queues[1].commands == .commands)'
log "fio started; waiting for a report that shows its I/O"
for i in $(seq 20); do
	stats=$("$ctl" stats ctlmq --json --interval 1) || fail "tcmudctl stats --json"
	jq -e "$busy" <<<"$stats" >/dev/null && break
done
log "tcmudctl stats --json (report $i): $stats"
jq -e "$busy" <<<"$stats" >/dev/null || fail "both queues should serve commands: $stats"
table=$("$ctl" stats ctlmq --interval 0.5) || fail "tcmudctl stats ctlmq"
log "tcmudctl stats ctlmq:"$'\n'"$table"
expect_match "$table" $'\nctlmq +1 +[1-9][0-9.]* ' "the table's row for queue 1 under fio"
kill $pf
wait $pf || true
