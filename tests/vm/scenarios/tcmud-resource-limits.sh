# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud under resource limits (issue 14, deliverable 4): started with
# RLIMIT_MEMLOCK 0 (io_uring rings have been charged to the memory cgroup,
# not to RLIMIT_MEMLOCK, since 5.12: the daemon must not need it), then
# confined to a memory cgroup far smaller than the data it moves (the
# backing file's page cache is charged there and must be reclaimed under
# I/O). Each time fio write+verify must pass, and the cgroup must record
# reclaim pressure but no OOM kill.
#
# The guest's /tmp is tmpfs, whose pages are charged to the writer and cannot
# be reclaimed without swap: the backing file lives on ext4 over a loop
# device whose image is allocated in full before tcmud joins the cgroup, so
# what the cgroup holds is the backing file's page cache, as on a real disk.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
cg=/sys/fs/cgroup

finish() {
	local rc=$?
	set +e
	remove_all_targets 2>/dev/null || true
	if [ -n "${TCMUD_PID:-}" ] && [ -e "$cg/cgroup.procs" ]; then echo "$TCMUD_PID" > "$cg/cgroup.procs" 2>/dev/null || true; fi
	rmdir $cg/tcmud-limited 2>/dev/null || true
	umount /mnt/limits 2>/dev/null || true
	cleanup_scenario $rc
}
trap finish EXIT

# 1. RLIMIT_MEMLOCK 0, soft and hard, inherited from this shell.
old=$(prlimit --pid $$ --memlock --output SOFT,HARD --noheadings --raw | tr ' ' :)
prlimit --pid $$ --memlock=0:0
start_tcmud
prlimit --pid $$ --memlock="$old"
lim=$(awk '/Max locked memory/ {print $4 ":" $5}' /proc/$TCMUD_PID/limits)
expect_eq "$lim" "0:0" "tcmud's RLIMIT_MEMLOCK (soft:hard)"
mount_loop_ext4 limits 96
truncate -s 64M /mnt/limits/lun.img
dev=$(export_via_loop "$(create_user_backstore limits0 file /mnt/limits/lun.img $((64 << 20)))")
fio_write_verify "$dev" 8M
log "RLIMIT_MEMLOCK 0: tcmud serves, write+verify passed"

# 2. A memory cgroup of 24 MiB around the running daemon, under 40 MiB of
#    buffered writes to its backing file.
# The debug kernel (tests/vm/debug-kernel.config) has no cgroups: the
# memory-pressure half cannot run there.
grep -qw cgroup2 /proc/filesystems || { log "no cgroup2 in this kernel: skip"; exit 77; }
mountpoint -q $cg || mount -t cgroup2 none $cg
grep -qw memory $cg/cgroup.controllers || { log "no memory controller: skip"; exit 77; }
grep -qw memory $cg/cgroup.subtree_control || echo +memory > $cg/cgroup.subtree_control
mkdir -p $cg/tcmud-limited
echo $((24 << 20)) > $cg/tcmud-limited/memory.max
[ -e $cg/tcmud-limited/memory.swap.max ] && echo 0 > $cg/tcmud-limited/memory.swap.max
echo "$TCMUD_PID" > $cg/tcmud-limited/cgroup.procs
sync
echo 3 > /proc/sys/vm/drop_caches
fio_write_verify "$dev" 40M
events=$(tr '\n' ' ' < $cg/tcmud-limited/memory.events)
peak=$(cat $cg/tcmud-limited/memory.peak 2>/dev/null || echo "?")
log "memory.max 24 MiB: write+verify passed; peak $peak; events: $events"
kill -0 "$TCMUD_PID" || fail "tcmud died in its memory cgroup"
expect_match "$events" "oom_kill 0( |$)" "OOM kills in tcmud's cgroup"
max_events=$(awk '$1 == "max" {print $2}' $cg/tcmud-limited/memory.events)
[ "$max_events" -gt 0 ] || fail "the cgroup never reached memory.max: the test exerted no pressure"
