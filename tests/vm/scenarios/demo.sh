# SPDX-License-Identifier: GPL-2.0-or-later
# The main job's guest side: a throwaway disk served by tcmud through
# tcm_loop, and a short mixed fio run on it, with the result printed.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud --no-dbus  # no system bus in this throwaway guest
truncate -s 256M /tmp/demo.img
bs=$(create_user_backstore demo0 file /tmp/demo.img $((256 << 20)))
dev=$(export_via_loop "$bs")
log "tcmud serves $dev ($(sg_inq "$dev" | sed -n 's/ *Product identification: //p')) from /tmp/demo.img"
sg_readcap -l "$dev" | sed -n 's/^ *//; /Last LBA\|Logical block length/p'
# Performance: 10 s of 4k random reads and writes from two jobs.
fio --name=demo --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
	--rw=randrw --bs=4k --numjobs=2 --time_based --runtime=10 --group_reporting \
	| sed -n '/read:\|write:\|READ:\|WRITE:\|err=/p'
# Integrity: each of two jobs writes its own 32 MiB region with checksums
# and reads it back (jobs sharing a region would overwrite each other's
# checksummed blocks, which fio reports as corruption).
fio_checked "write+verify of 2 x 32 MiB" 64M --name=verify --filename="$dev" \
	--direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite --bs=4k --numjobs=2 \
	--size=32M --offset_increment=32M --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--group_reporting
log "write+verify of 2 x 32 MiB passed"
log "tcmud log:"
cat "$TCMUD_LOG"
