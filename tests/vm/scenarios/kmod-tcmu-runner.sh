# SPDX-License-Identifier: GPL-2.0-or-later
# Compatibility: Debian's stock tcmu-runner, unchanged, on our patched uio.ko
# and target_core_user.ko with the default attrib/nr_queues=1. Runs the
# tcmu-runner scenario's checks after proving the patched modules are live.
# Needs --kmod (a run without it fails: it would test the stock modules).
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
[ -n "${TCMUD_KMOD:-}" ] || skip "run with --kmod DIR (patched modules)"
load_target_stack
for m in uio target_core_user; do
	live=$(od -An -tx1 "/sys/module/$m/notes/.note.gnu.build-id" | tr -d ' \n')
	want=$(readelf -n "$TCMUD_KMOD/$m.ko" | sed -n 's/.*Build ID: //p')
	expect_match "$live" "$want\$" "$m build-id (live vs --kmod)"
done
grep -q nr_queues <(ls "$TARGET"/core 2>/dev/null; modinfo -F parm "$TCMUD_KMOD/target_core_user.ko"; strings "$TCMUD_KMOD/target_core_user.ko") ||
	fail "target_core_user.ko from --kmod is not the multi-queue build"
log "patched uio and target_core_user are live"
. "$TCMUD_SRC/tests/vm/scenarios/tcmu-runner-lun.sh"
mq=$(cat "$TARGET"/core/user_0/raw0/attrib/nr_queues)
expect_eq "$mq" 1 "attrib/nr_queues default"
