# SPDX-License-Identifier: GPL-2.0-or-later
# The same battery of CDBs (tests/vm/guest/cdb_diff.py: valid commands,
# boundary values, invalid fields) sent through SG_IO to a LIO fileio LUN
# and to a tcmud LUN in the same boot, over identical 64 MiB images; status,
# sense and returned data are diffed. Every difference must be listed in
# docs/scsi.md "Differences from LIO fileio" with its reason, and every
# listed one must still differ. Then READ(16)s of 1 to 8 MiB through SG_IO
# on the /dev/sdX nodes, into aligned and unaligned buffers: alike on both.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
load_target_stack
start_tcmud
head -c 2M /dev/urandom > /tmp/diff-head
for f in /tmp/diff-ref.img /tmp/diff-tcmud.img; do
	cp /tmp/diff-head "$f"
	truncate -s 64M "$f"
	# The last block, which the battery reads too.
	dd if=/tmp/diff-head of="$f" bs=512 count=1 seek=131071 conv=notrunc status=none
done
ref=$(create_fileio_backstore diffref /tmp/diff-ref.img $((64 << 20)))
# Thin provisioning on, so UNMAP and WRITE SAME with UNMAP are compared too.
echo 1 > "$ref/attrib/emulate_tpu"
echo 1 > "$ref/attrib/emulate_tpws"
ours=$(create_user_backstore difftcmud file /tmp/diff-tcmud.img $((64 << 20)))
ref_dev=$(export_via_loop "$ref")
our_dev=$(export_via_loop "$ours")
log "fileio $ref_dev ($(sg_of "$ref_dev")), tcmud $our_dev ($(sg_of "$our_dev"))"
python3 "$TCMUD_SRC/tests/vm/guest/cdb_diff.py" "$(sg_of "$ref_dev")" "$(sg_of "$our_dev")" \
	"$TCMUD_SRC/docs/scsi.md" || fail "undocumented differences from LIO fileio (above)"
# 1 to 8 MiB READ(16)s through SG_IO on the /dev/sdX nodes (the block
# layer maps the caller's pages there), aligned and not: alike on both.
python3 "$TCMUD_SRC/tests/vm/guest/cdb_diff.py" --large-reads "$ref_dev" "$our_dev" ||
	fail "large SG_IO reads differ between LIO fileio and tcmud (above)"
kill -0 "$TCMUD_PID" || fail "tcmud died"
