# Benchmark, not a test (not in stock.list; run by scripts/bench.sh): in this
# one boot, the same 256 MiB prefilled file (on XFS, see below) is served
# through tcm_loop by (a) LIO fileio, (b) Debian's tcmu-runner (qcow handler
# on the raw image: Debian ships no file handler), (c) tcmud (user:file),
# and the same three fio jobs run against each (tests/vm/bench/bench-lib.sh).
# tcmu-runner and tcmud never run at the same time: each is stopped, its
# targets removed, before the next starts. Then, unless BENCH_CALLGRIND=0,
# tests/vm/bench/callgrind.sh counts each daemon's instructions per command.
# Results land in /vm-out/bench/ for the host to tabulate.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/bench/bench-lib.sh"
# shellcheck source=/dev/null
[ -f "$TCMUD_BUILD/bench.env" ] && . "$TCMUD_BUILD/bench.env"
load_target_stack
# The backing file lives on XFS (a loop device over a tmpfs file), as it
# would on a server: tmpfs lacks FMODE_NOWAIT, so io_uring hands every
# tmpfs read and write to an io-wq thread, which is not what production
# sees. BENCH_FS=tmpfs puts it straight on the guest's tmpfs instead.
img=/tmp/bench.img
if [ "${BENCH_FS:-xfs}" = xfs ]; then
	modprobe loop
	modprobe xfs
	truncate -s 400M /tmp/xfs.img
	mkfs.xfs -q /tmp/xfs.img
	mkdir -p /mnt/bench
	mount -o loop /tmp/xfs.img /mnt/bench
	img=/mnt/bench/bench.img
fi
size=$((256 << 20))
: > "$BENCH_OUT/counters.tsv"
: > "$BENCH_OUT/callgrind.tsv"
{
	echo "kernel=$(uname -r)"
	echo "guest_cpus=$(nproc)"
	echo "clk_tck=$(getconf CLK_TCK)"
	echo "fio=$(fio --version)"
	echo "tcmu_runner=$(dpkg-query -W -f '${Version}' tcmu-runner)"
	echo "runtime_s=$BENCH_RUNTIME"
	echo "callgrind_ios=$BENCH_CALLGRIND_IOS"
	echo "backing_fs=${BENCH_FS:-xfs}"
} > "$BENCH_OUT/meta.env"
# 1 MiB of random bytes repeated: real pages of non-zero data, without
# 256 MiB of /dev/urandom, which takes minutes under TCG.
python3 -c 'import os, sys
block = os.urandom(1 << 20)
with open(sys.argv[1], "wb") as f:
    for _ in range(256): f.write(block)' $img
log "prefilled $img with 256 MiB of data"

# Every target runs with a write-back cache (WCE=1), so none pays for a
# durable write per command: fileio needs fd_buffered_io=1 at creation
# (otherwise it opens the file O_DSYNC); TCMU devices take the attribute,
# and tcmud, which honours WCE=0 by making every write FUA (tcmu-runner's
# qcow handler does not), then writes through the page cache like the rest.
dir=$TARGET/core/fileio_0/bench-fileio
mkdir -p "$dir"
echo "fd_dev_name=$img,fd_dev_size=$size,fd_buffered_io=1" > "$dir/control"
echo 1 > "$dir/enable"
bs=$dir
dev=$(export_via_loop "$bs")
bench_prepare_disk "$dev"
bench_run fileio "$dev"
remove_all_targets

mkdir -p /etc/tcmu /var/log/tcmu
tcmu-runner -l /var/log/tcmu &
runner=$!
stop_on_exit $runner
bs=$(USER_BACKSTORE_ATTRS=emulate_write_cache=1 create_user_backstore bench-runner qcow $img $size)
wait_uio_open $runner 30
dev=$(export_via_loop "$bs")
grep -q "treat as raw" /var/log/tcmu/tcmu-runner.log || fail "qcow handler did not open the raw image"
bench_prepare_disk "$dev"
bench_run tcmu-runner "$dev" $runner
bench_stop_daemon $runner
cp /var/log/tcmu/tcmu-runner.log "$BENCH_OUT/tcmu-runner.log"

start_tcmud
bs=$(USER_BACKSTORE_ATTRS=emulate_write_cache=1 create_user_backstore bench-tcmud file $img $size)
wait_uio_open "$TCMUD_PID" 30
dev=$(export_via_loop "$bs")
bench_prepare_disk "$dev"
bench_run tcmud "$dev" "$TCMUD_PID"
bench_stop_daemon "$TCMUD_PID"

if [ "${BENCH_CALLGRIND:-1}" = 1 ]; then
	# Its own process (own set -e and clean-up) under a time cap: valgrind
	# under TCG is slow, and the figures above must survive its failure.
	# After a failure configfs is left alone (a removal could wait forever
	# on a daemon that never answered); the guest powers off anyway.
	if timeout -k 10 "${BENCH_CALLGRIND_LIMIT:-300}" bash "$TCMUD_SRC/tests/vm/bench/callgrind.sh" "$img" $size; then
		log "callgrind stage done"
	else
		log "callgrind stage failed or ran out of time (exit $?); instructions not counted"
		trap - EXIT
	fi
fi
log "bench done"
