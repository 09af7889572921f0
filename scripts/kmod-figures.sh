#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Figures for the review of the uio/tcmu patches, side by side from ONE VM
# boot (tests/vm/scenarios/kmod-figures.sh): fio 4k randread, libaio,
# direct, iodepth 16, with 1 job and with JOBS jobs, on
#   stock      Debian's uio.ko + target_core_user.ko, tcmu-mq-client on the
#              classic ABI;
#   patched 1  kmod/'s modules with nr_queues=1;
#   patched N  kmod/'s modules with nr_queues=QUEUES.
# The guest unloads the stock modules and inserts ours half-way, so both
# halves share one boot. Prints the table (IOPS, commands, the client's
# context switches per command) and writes JSON.
#
#   scripts/kmod-figures.sh [--build DIR] [--kmod DIR] [--smp N] [--jobs N]
#                           [--queues N] [--runtime S] [--json FILE]
#
# --kmod defaults to a fresh kmod/build.sh into <build>/kmod-patched; the
# client comes from <build>/tests/kmod-client/tcmu-mq-client. Emulated time
# is noisy (run-to-run spread ±40%): compare rows of one run, and prefer the
# counts (ctxt/cmd) to IOPS.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build kmod="" smp=4 jobs="" queues="" runtime=15 json=""
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(realpath "$2"); shift 2 ;;
	--kmod) kmod=$(realpath "$2"); shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--queues) queues=$2; shift 2 ;;
	--runtime) runtime=$2; shift 2 ;;
	--json) json=$2; shift 2 ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "kmod-figures: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -x "$build/tests/kmod-client/tcmu-mq-client" ] ||
	{ echo "kmod-figures: build tcmu-mq-client first (ninja -C $build)" >&2; exit 2; }
if [ -z "$kmod" ]; then
	kmod=$build/kmod-patched
	"$src/kmod/build.sh" "$kmod" >&2
fi
json=${json:-$build/kmod-figures.json}
# The scenario's parameters, for this run only (a CI run gets its defaults).
trap 'rm -f "$build/kmod-figures.env"' EXIT
cat > "$build/kmod-figures.env" <<ENV
FIG_JOBS=${jobs:-$smp}
FIG_QUEUES=${queues:-$smp}
FIG_RUNTIME=$runtime
ENV
out=$build/vm-out/kmod-figures
"$src/tests/vm/run" --build "$build" --kmod "$kmod" --smp "$smp" --timeout 600 \
	--out "$out" kmod-figures >&2 || { echo "kmod-figures: VM run failed (log: $out)" >&2; exit 1; }
sed -n '/^modules /,$p' "$out/kmod-figures.log"
cp "$out/kmod-figures.json" "$json"
echo "JSON: $json"
