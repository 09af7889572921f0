# One tcmud serves two TCMU disks at once, each on its own backing file:
# concurrent checksummed write+verify on both, and each file holds only
# what was written to its own disk.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
truncate -s 128M /tmp/a.img /tmp/b.img
a=$(export_via_loop "$(create_user_backstore diska file /tmp/a.img $((128 << 20)))")
b=$(export_via_loop "$(create_user_backstore diskb file /tmp/b.img $((128 << 20)))")
log "disks $a and $b"
fio_write_verify "$a" 32M & pa=$!
fio_write_verify "$b" 32M & pb=$!
wait $pa || fail "write+verify on $a"
wait $pb || fail "write+verify on $b"
# Distinct contents prove the disks were not crossed.
printf 'disk-a-marker' | dd of="$a" bs=512 seek=1000 conv=sync oflag=direct status=none
printf 'disk-b-marker' | dd of="$b" bs=512 seek=1000 conv=sync oflag=direct status=none
sync
expect_eq "$(dd if=/tmp/a.img bs=512 skip=1000 count=1 status=none | tr -d '\0')" disk-a-marker "a.img"
expect_eq "$(dd if=/tmp/b.img bs=512 skip=1000 count=1 status=none | tr -d '\0')" disk-b-marker "b.img"
