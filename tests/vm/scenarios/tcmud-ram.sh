# SPDX-License-Identifier: GPL-2.0-or-later
# The ram handler end to end: a user:ram LUN carries write+verify and
# answers READ CAPACITY with the configured size; tcmudctl lists it as
# "ram"; a cfgstring that is not a label is refused at enable with the
# reason in tcmud's log, and the refusal leaves the served LUN alone.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
size=$((64 << 20))
sd=$(export_via_loop "$(create_user_backstore ramdisk ram bench-1 $size)")
log "ram disk $sd"
fio_write_verify "$sd" 32M
cap=$(sg_readcap --16 "$(sg_of "$sd")") || fail "sg_readcap"
expect_match "$cap" "Last LBA=$((size / 512 - 1)) " "READ CAPACITY(16) of the ram disk"
ctl="$TCMUD_BUILD/tools/tcmudctl/tcmudctl"
expect_eq "$("$ctl" list --json | jq -r '.devices[] | select(.name == "ramdisk") | .subtype')" \
	ram "tcmudctl list subtype"

dir=$TARGET/core/user_0/badram
mkdir -p "$dir"
echo "dev_config=ram//tmp/x.img" > "$dir/control"
echo "dev_size=$size" > "$dir/control"
if (echo 1 > "$dir/enable") 2>/tmp/badram.err; then
	fail "a ram device with a path for cfgstring was enabled"
fi
rmdir "$dir"
grep -q "ram/badram: '/tmp/x.img': the ram handler's cfgstring is an optional label" "$TCMUD_LOG" \
	|| fail "no reason for the refused ram device in tcmud's log"
fio_write_verify "$sd" 8M
