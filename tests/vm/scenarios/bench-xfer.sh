# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark (not in CI): 128k random reads on one tcmud LUN, before and after
# the transfer limit follows the data area, in ONE boot. "before" restarts
# tcmud with max_transfer_kb = 64, which advertises exactly what tcmud
# advertised before (hw_max_sectors 128 = 64 KiB); "after" uses the default.
# Phases alternate before/after/before/after so drift in the host's load
# shows. Prints, per phase: max_sectors_kb, IOPS, MiB/s, SCSI commands per
# fio I/O (/sys/block/sdX/stat) and tcmud's CPU ticks per I/O.
#
#   tests/vm/run --build build --out build/vm-out/bench-xfer bench-xfer
#   BENCH_XFER_RUNTIME=S (default 10) seconds of fio per phase.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
runtime=${BENCH_XFER_RUNTIME:-10}
load_target_stack
start_tcmud
head -c 256M /dev/zero > /tmp/bx.img
bs=$(create_user_backstore bx file /tmp/bx.img $((256 << 20)))
dev=$(export_via_loop "$bs")
sd=${dev#/dev/}
echo "max_transfer_kb = 64" > /tmp/bx-before.conf
: > /tmp/bx-after.conf
out=${TCMUD_VM_OUT:-/tmp}/bench-xfer.md
printf '| phase | max_sectors_kb | IOPS | MiB/s | commands per I/O | tcmud CPU ticks per 1000 I/O |\n|---|---|---|---|---|---|\n' > "$out"
for phase in before after before after; do
	kill -9 "$TCMUD_PID"
	wait "$TCMUD_PID" 2>/dev/null || true
	start_tcmud -c "/tmp/bx-$phase.conf"
	echo 1 > "/sys/block/$sd/device/rescan"
	msk=$(cat "/sys/block/$sd/queue/max_sectors_kb")
	c0=$(awk '{print $1}' "/sys/block/$sd/stat")
	t0=$(awk '{print $14 + $15}' "/proc/$TCMUD_PID/stat")
	fio --name=bx --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
		--rw=randread --bs=128k --runtime="$runtime" --time_based \
		--output-format=json > /tmp/bx.json || fail "fio ($phase)"
	c1=$(awk '{print $1}' "/sys/block/$sd/stat")
	t1=$(awk '{print $14 + $15}' "/proc/$TCMUD_PID/stat")
	python3 - "$phase" "$msk" $((c1 - c0)) $((t1 - t0)) >> "$out" <<'PY'
import json, sys
phase, msk, cmds, ticks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = json.load(open("/tmp/bx.json"))["jobs"][0]["read"]
ios = r["total_ios"]
print(f"| {phase} | {msk} | {r['iops']:.0f} | {r['bw'] / 1024:.1f} | {cmds / ios:.2f} | "
      f"{1000 * ticks / ios:.1f} |")
PY
	log "$(tail -1 "$out")"
done
cat "$out"
