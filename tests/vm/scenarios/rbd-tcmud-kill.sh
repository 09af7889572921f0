# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud killed with SIGKILL and restarted under write+verify I/O to an rbd
# backstore: fio sees no error and every pass verifies. Each restart takes
# the device over and reopens the image; its exclusive lock still belongs
# to the killed daemon's client until librbd breaks it, so writes wait
# (BUSY, retried by the initiator) meanwhile instead of failing.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
need_ceph
need_tcmud_rbd
load_target_stack
start_tcmud
rbd_image kill0 64M
dev=$(export_via_loop "$(create_user_backstore kill0 rbd "$(rbd_cfg kill0)" $((64 << 20)))")
log "tcmud rbd disk is $dev"
rm -f /tmp/kill.stop
fio_verify_loop "$dev" 8M /tmp/kill.stop &
io=$!
kill_and_restart_tcmud 2 kill0 $io
touch /tmp/kill.stop
wait $io || fail "fio write+verify failed across the SIGKILLs"
fio_write_verify "$dev" 8M
log "locks: $(host_ceph rbd lock ls "$TCMUD_CEPH_POOL/kill0" | tr '\n' ' ')"
