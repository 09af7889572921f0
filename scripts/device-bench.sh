#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots the bundle of scripts/device-bench-bundle.sh on a machine that has
# no QEMU of its own (the lent many-core "device" machine; any x86-64 Linux
# will do): unpacks it, runs its QEMU through the bundle's own ld.so and
# libraries, and lets the guest's /init (scripts/device-bench-init.sh) run
# fio randread against LIO fileio and tcmud, stock modules then kmod/'s,
# in one boot. Writes into OUT: console.log (the guest's serial console),
# results.txt (one line per fio run, from the guest's second serial port),
# results.md (the table with the ratios of issue 16), host.txt (CPU model,
# cores, accel) and prints results.md.
#
# On the lent machine (after scripts/device-bench-bundle.sh here): one
# `run` with carry [".devbench"] and timeout_s 480, command
#   scripts/device-bench.sh --size 512 --out "$OUT/r" 2>&1 | tee "$OUT/log"
# (seven files come back; a 16-core machine gives the guest 8 vCPUs).
# Under TCG the 21 fio runs of the defaults take about 5 minutes of wall.
#
#   scripts/device-bench.sh [options]
#     --bundle FILE   default .devbench/bundle.tar.xz
#     --out DIR       default device-bench-out
#     --smp N         guest vCPUs (default: half the host's CPUs, at most 8)
#     --mem MB        guest memory (default 6144)
#     --size MB       backing file (default 1024)
#     --runtime S --ramp S        per fio run (default 10, 2)
#     --queues "1 4"  nr_queues values on the patched modules
#     --jobs4k "2 4"  --jobs128k "2"   fio numjobs values
#     --fs xfs|tmpfs  where the backing file lives in the guest (default xfs)
#     --accel auto|tcg|kvm   auto: KVM if /dev/kvm works, else TCG (default)
#     --timeout S     the whole boot's limit (default 420)
#     --no-restock    skip the stock half's second round at the end (stock2:
#                     fileio and tcmud-stock again, the drift over the boot)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
bundle=$src/.devbench/bundle.tar.xz out=device-bench-out smp="" mem=6144 size=1024
runtime=10 ramp=2 queues="1 4" jobs4k="2 4" jobs128k="2" fs=xfs accel=auto timeout=420 restock=1
while [ $# -gt 0 ]; do
	case $1 in
	--bundle) bundle=$(realpath "$2"); shift 2 ;;
	--out) out=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--runtime) runtime=$2; shift 2 ;;
	--ramp) ramp=$2; shift 2 ;;
	--queues) queues=$2; shift 2 ;;
	--jobs4k) jobs4k=$2; shift 2 ;;
	--jobs128k) jobs128k=$2; shift 2 ;;
	--fs) fs=$2; shift 2 ;;
	--accel) accel=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--no-restock) restock=0; shift ;;
	-h|--help) sed -n '3,32p' "$0"; exit 0 ;;
	*) echo "device-bench: unknown argument $1" >&2; exit 2 ;;
	esac
done
log() { echo "device-bench: $*" >&2; }
ncpu=$(nproc)
[ -n "$smp" ] || { smp=$((ncpu / 2)); [ "$smp" -le 8 ] || smp=8; [ "$smp" -ge 1 ] || smp=1; }
mkdir -p "$out"
out=$(realpath "$out")
d=$(mktemp -d /tmp/devbench.XXXXXX)
trap 'rm -rf "$d"' EXIT
t0=$(date +%s)
if command -v xz > /dev/null; then
	xz -dc "$bundle" | tar -x -C "$d"
else
	python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' "$bundle" "$d"
fi
log "unpacked in $(( $(date +%s) - t0 )) s: $(grep -E '^(commit|kernel|qemu|fio|tcmud)=' "$d/BUILD" | tr '\n' ' ')"
cp "$d/BUILD" "$out/BUILD"

qemu() {
	QEMU_MODULE_DIR=$d/host/qemu-modules "$d/host/lib/ld-linux-x86-64.so.2" \
		--library-path "$d/host/lib" "$d/host/bin/qemu-system-x86_64" -L "$d/host/share" "$@"
}
cmdline="console=ttyS0 loglevel=4 panic=-1 tsc=reliable devbench.size_mb=$size"
cmdline+=" devbench.runtime=$runtime devbench.ramp=$ramp devbench.fs=$fs devbench.restock=$restock"
cmdline+=" devbench.queues=${queues// /,} devbench.jobs4k=${jobs4k// /,} devbench.jobs128k=${jobs128k// /,}"
# qemu_cmd ACCEL_ARGS...: the benchmark boot's command line, in $cmd.
qemu_cmd() {
	cmd=(timeout -k 10 "$timeout" env -i PATH=/usr/bin:/bin
		QEMU_MODULE_DIR="$d/host/qemu-modules" "$d/host/lib/ld-linux-x86-64.so.2"
		--library-path "$d/host/lib" "$d/host/bin/qemu-system-x86_64" -L "$d/host/share"
		"$@" -smp "$smp" -m "$mem" -nodefaults -no-reboot -display none -monitor none
		-serial "file:$out/console.log" -serial "file:$out/results.txt"
		-kernel "$d/guest/vmlinuz" -initrd "$d/guest/initramfs.cpio" -append "$cmdline")
	rm -f "$out/console.log" "$out/results.txt"
}
qemu -version | head -n1 >&2

used=tcg
if [ "$accel" != tcg ] && [ -c /dev/kvm ] && [ -w /dev/kvm ]; then
	# KVM, if it boots this kernel: the guest says "devbench: ... up:" within
	# seconds; otherwise (a nested hypervisor that cannot run it) TCG.
	qemu_cmd -accel kvm -cpu host
	"${cmd[@]}" &
	k=$!
	for _ in $(seq 60); do
		grep -q "devbench: .* up:" "$out/console.log" 2>/dev/null && break
		kill -0 $k 2>/dev/null || break
		sleep 0.5
	done
	if grep -q "devbench: .* up:" "$out/console.log" 2>/dev/null; then
		used=kvm
		log "KVM boots: the benchmark runs under KVM"
		wait $k || log "qemu (kvm) exit $?"
	else
		# $k is timeout(1): it passes the signal on to QEMU.
		kill $k 2>/dev/null || true
		wait $k 2>/dev/null || true
		mv "$out/console.log" "$out/console.kvm-failed.log" 2>/dev/null || true
		log "KVM did not boot the guest (console.kvm-failed.log); TCG"
		[ "$accel" != kvm ] || exit 1
	fi
fi
if [ $used = tcg ]; then
	t1=$(date +%s)
	# shellcheck disable=SC2054 # QEMU's own comma-separated options
	qemu_cmd -accel tcg,thread=multi -cpu max
	"${cmd[@]}" || log "qemu exit $? after $(( $(date +%s) - t1 )) s"
fi
log "boot done after $(( $(date +%s) - t0 )) s"

tr -d '\r' < "$out/results.txt" > "$out/results.clean" && mv "$out/results.clean" "$out/results.txt"
{
	echo "cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1)"
	echo "host_cpus=$ncpu"
	echo "accel=$used"
	echo "smp=$smp"
	echo "mem_mb=$mem"
	echo "kernel_host=$(uname -r)"
	echo "wall_s=$(( $(date +%s) - t0 ))"
} > "$out/host.txt"
python3 "$src/scripts/device-bench-report.py" "$out" > "$out/results.md"
cat "$out/results.md"
grep -q '^DONE' "$out/results.txt" || { log "the guest did not finish (see $out/console.log)"; exit 1; }
