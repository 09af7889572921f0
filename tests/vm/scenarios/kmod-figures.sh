# SPDX-License-Identifier: GPL-2.0-or-later
# Figures for the uio/tcmu review, all in this one boot: fio 4k randread
# (libaio, direct, iodepth 16) with 1 job and with JOBS jobs on a RAM disk
# served by tcmu-mq-client, on
#   stock      Debian's own uio.ko + target_core_user.ko (modprobe), client on
#              the classic ABI (1 queue, 1 uio device)
#   patched/1  our modules (--kmod), nr_queues=1 (the same classic ABI)
#   patched/N  our modules, nr_queues=QUEUES, one thread and one uio device
#              per queue
# The stock modules are unloaded and ours inserted between the two halves,
# so every figure comes from the same boot. Besides IOPS it records counts
# that do not depend on emulated time: commands the client served and its
# context switches (all threads, from /proc/PID/task/*/status).
# Parameters (optional) come from $TCMUD_BUILD/kmod-figures.env, written by
# scripts/kmod-figures.sh: FIG_JOBS, FIG_QUEUES, FIG_RUNTIME.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/kmod-client/vm-lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
# shellcheck source=/dev/null
[ -f "$TCMUD_BUILD/kmod-figures.env" ] && . "$TCMUD_BUILD/kmod-figures.env"
# The defaults keep a CI run (patched.list, 2 vCPUs) well inside 300 s.
jobs=${FIG_JOBS:-$(nproc)} queues=${FIG_QUEUES:-$(nproc)} runtime=${FIG_RUNTIME:-8}
size=$((256 << 20))
results=/tmp/figures.txt
: > $results

ctxt_switches() {  # PID -> "voluntary nonvoluntary", summed over its threads
	cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt/ {v += $2} /^nonvoluntary_ctxt/ {n += $2} END {print v, n}'
}
client_commands() {  # PID LOG -> the client's received count, via SIGUSR1
	local before
	before=$(grep -c '^stats total' "$2" || true)
	kill -USR1 "$1"
	for _ in $(seq 50); do
		[ "$(grep -c '^stats total' "$2" || true)" -gt "$before" ] && break
		sleep 0.1
	done
	grep '^stats total' "$2" | tail -n1 | sed 's/.* received=\([0-9]*\).*/\1/'
}

# measure LABEL NR_QUEUES DEV PID LOG JOBS
measure() {
	local label=$1 nq=$2 dev=$3 pid=$4 logf=$5 j=$6 c0 c1 v0 n0 v1 n1 iops ios
	c0=$(client_commands "$pid" "$logf"); read -r v0 n0 < <(ctxt_switches "$pid")
	fio --name=fig --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
		--rw=randread --bs=4k --numjobs="$j" --time_based --runtime="$runtime" \
		--group_reporting --output-format=json > /tmp/fig.json ||
		fail "$label: fio"
	read -r v1 n1 < <(ctxt_switches "$pid"); c1=$(client_commands "$pid" "$logf")
	read -r iops ios < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["jobs"][0]["read"]; print(round(r["iops"]), r["total_ios"])' /tmp/fig.json)
	echo "$label $nq $j $iops $ios $((c1 - c0)) $((v1 - v0)) $((n1 - n0))" >> $results
	log "$label nr_queues=$nq jobs=$j: $iops IOPS, $ios ios, $((c1 - c0)) cmds, ctxt $((v1 - v0))+$((n1 - n0))"
}

# run_config LABEL NR_QUEUES(empty = no attribute: stock module)
run_config() {
	local label=$1 nq=${2:-1} name=fig$RANDOM bs sd pid dir
	bs=$(create_mq_backstore "$name" "${2:-}" "$size")
	start_client "$name" "$size" "$LOGS/$name.log"
	pid=$CLIENT_PID
	sd=$(export_served "$bs" "$CLIENT_PID" "$LOGS/$name.log")
	echo none > "/sys/block/$(basename "$sd")/queue/scheduler" 2>/dev/null || true
	measure "$label" "$nq" "$sd" "$pid" "$LOGS/$name.log" 1
	measure "$label" "$nq" "$sd" "$pid" "$LOGS/$name.log" "$jobs"
	remove_all_targets
	wait_client "$pid" "$LOGS/$name.log"
}

build_id() { od -An -tx1 "/sys/module/$1/notes/.note.gnu.build-id" | tr -d ' \n' | tail -c 40; }

ko_build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }

# Stock half: Debian's modules, loaded by modprobe. An earlier scenario of
# this boot may have inserted ours: take them out first.
kmod=$TCMUD_KMOD
if lsmod | grep -q '^target_core_user '; then
	remove_all_targets
	rmmod target_core_user
fi
! lsmod | grep -q '^uio ' || rmmod uio
TCMUD_KMOD="" load_target_stack
for m in uio target_core_user; do
	[ "$(build_id $m)" != "$(ko_build_id "$kmod/$m.ko")" ] || fail "stock half: $m is ours, not Debian's"
done
stock_ids="uio=$(build_id uio) target_core_user=$(build_id target_core_user)"
log "stock modules live: $stock_ids"
run_config stock
rmdir "$TARGET"/core/user_* 2>/dev/null || true
rmmod target_core_user uio

# Patched half: ours, by insmod (lib.sh's load_target_stack with TCMUD_KMOD).
TCMUD_KMOD=$kmod load_target_stack
for m in uio target_core_user; do
	expect_eq "$(build_id $m)" "$(ko_build_id "$kmod/$m.ko")" "$m build-id (live vs --kmod)"
done
log "patched modules live"
run_config patched 1
run_config patched "$queues"

python3 - "$results" "$TCMUD_VM_OUT/kmod-figures.json" "$runtime" "$(nproc)" "$stock_ids" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    label, nq, jobs, iops, ios, cmds, vcs, nvcs = line.split()
    cmds = int(cmds)
    rows.append(dict(modules=label, nr_queues=int(nq), jobs=int(jobs), iops=int(iops),
                     fio_ios=int(ios), client_cmds=cmds, ctxt_voluntary=int(vcs),
                     ctxt_nonvoluntary=int(nvcs),
                     ctxt_per_cmd=round((int(vcs) + int(nvcs)) / cmds, 3) if cmds else None))
doc = dict(what="fio 4k randread libaio direct iodepth 16, RAM disk via tcmu-mq-client",
           runtime_s=int(sys.argv[3]), guest_cpus=int(sys.argv[4]), stock_build_ids=sys.argv[5],
           results=rows)
json.dump(doc, open(sys.argv[2], "w"), indent=1)
print(f"{'modules':<8} {'queues':>6} {'jobs':>4} {'IOPS':>7} {'fio ios':>8} {'cmds':>8} {'ctxt/cmd':>8} {'vol':>7} {'invol':>6}")
for r in rows:
    print(f"{r['modules']:<8} {r['nr_queues']:>6} {r['jobs']:>4} {r['iops']:>7} {r['fio_ios']:>8} "
          f"{r['client_cmds']:>8} {r['ctxt_per_cmd']!s:>8} {r['ctxt_voluntary']:>7} {r['ctxt_nonvoluntary']:>6}")
PY
