# The main job's guest side: a throwaway disk served by tcmud through
# tcm_loop, and a short mixed fio run on it, with the result printed.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 256M /tmp/demo.img
bs=$(create_user_backstore demo0 file /tmp/demo.img $((256 << 20)))
dev=$(export_via_loop "$bs")
log "tcmud serves $dev ($(sg_inq "$dev" | sed -n 's/ *Product identification: //p')) from /tmp/demo.img"
sg_readcap -l "$dev" | sed -n 's/^ *//; /Last LBA\|Logical block length/p'
fio --name=demo --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
	--rw=randrw --bs=4k --numjobs=2 --time_based --runtime=10 --group_reporting \
	--verify=crc32c --verify_fatal=1 --size=64M \
	| sed -n '/read:\|write:\|lat (usec): min\|READ:\|WRITE:\|err=/p'
log "tcmud log:"
cat "$TCMUD_LOG"
