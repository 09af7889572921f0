# tcmud on the patched modules (run with --kmod): it detects the multi-queue
# ABI and serves nr_queues = 1, 2 and 4 with one worker per queue, each woken
# by its own eventfd. For each: fio crc32c write+verify with 4 jobs, and
# every queue a CPU maps to did work (the kernel steers CPU c to queue c % N).
# Then, on a 2-queue device: COMPARE AND WRITE atomicity across queues (two
# CPUs increment one block's counter through CAW; no increment may be lost),
# and SIGKILL + restart under write+verify.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || fail "needs the patched modules (tests/vm/run --kmod DIR)"
load_target_stack
start_tcmud
cpus=$(nproc)

for n in 1 2 4; do
	truncate -s 64M /tmp/mq$n.img
	dir=$TARGET/core/user_0/mq$n
	mkdir -p "$dir"
	echo "dev_config=file//tmp/mq$n.img" > "$dir/control"
	echo "dev_size=$((64 << 20))" > "$dir/control"
	echo "$n" > "$dir/attrib/nr_queues"
	echo 1 > "$dir/enable"
	dev=$(export_via_loop "$dir")
	grep -q "mq$n: serving /dev/uio.*$n queue(s)" "$TCMUD_LOG" || fail "tcmud did not serve mq$n with $n queues"
	fio --name=mq --filename="$dev" --size=16M --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randwrite --bs=4k --numjobs=4 --offset_increment=16M --size=16M \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --output=/dev/null \
		|| fail "fio write+verify with $n queues"
	log "$n queue(s): write+verify passed"
	remove_all_targets
	for q in $(seq 0 $((n - 1))); do
		line=$(grep "mq$n: queue $q: stopped after" "$TCMUD_LOG") || fail "no stop line for queue $q of mq$n"
		cmds=$(echo "$line" | sed 's/.*after \([0-9]*\) commands.*/\1/')
		if [ "$q" -lt "$cpus" ]; then
			[ "$cmds" -gt 0 ] || fail "queue $q of mq$n served no command"
		else
			expect_eq "$cmds" 0 "commands on queue $q of mq$n, which no CPU maps to"
		fi
		log "mq$n queue $q: $cmds commands"
	done
done

truncate -s 64M /tmp/mqc.img
dir=$TARGET/core/user_0/mqc
mkdir -p "$dir"
echo "dev_config=file//tmp/mqc.img" > "$dir/control"
echo "dev_size=$((64 << 20))" > "$dir/control"
echo 2 > "$dir/attrib/nr_queues"
echo 60 > "$dir/attrib/cmd_time_out"
echo 1 > "$dir/enable"
dev=$(export_via_loop "$dir")

# caw_increment CPU COUNT: COUNT successful read-then-CAW increments of the
# decimal counter in LBA 100, issued from CPU (so through queue CPU % 2).
caw_increment() {
	local cpu=$1 want=$2 done=0 cur
	while [ $done -lt "$want" ]; do
		cur=$(dd if="$dev" bs=512 skip=100 count=1 iflag=direct status=none | tr -d '\0')
		{ printf '%s' "$cur" | dd bs=512 conv=sync status=none
		  printf '%s' $((cur + 1)) | dd bs=512 conv=sync status=none; } > /tmp/caw.$cpu
		if taskset -c "$cpu" sg_compare_and_write --in=/tmp/caw.$cpu --lba=100 --num=1 "$dev" \
			>/dev/null 2>&1; then
			done=$((done + 1))
		fi
	done
}
printf 0 | dd of="$dev" bs=512 seek=100 conv=sync oflag=direct status=none
if [ "$cpus" -ge 2 ]; then
	caw_increment 0 25 & a=$!
	caw_increment 1 25 & b=$!
	wait $a; wait $b
	final=$(dd if="$dev" bs=512 skip=100 count=1 iflag=direct status=none | tr -d '\0')
	expect_eq "$final" 50 "counter after 2 x 25 COMPARE AND WRITE increments from two queues"
	log "CAW across queues: 50 increments, none lost"
fi

fio_write_verify "$dev" 32M & fio_pid=$!
kill_and_restart_tcmud 2 mqc
wait $fio_pid || fail "fio saw an error across 2 daemon kills with 2 queues"
log "write+verify survived 2 SIGKILLs on 2 queues"
