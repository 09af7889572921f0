# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud refuses an rbd backstore it cannot serve, at creation, naming the
# cause in its log, and nothing hangs (the kernel waits for tcmud's netlink
# reply without a bound): a pool, an image, a user that do not exist, a
# wrong key, a conf that does not exist, a conf whose mon does not answer,
# an unknown cfgstring option. The enable fails for each, no device stays
# behind, and a good image still serves afterwards.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
. "$TCMUD_SRC/tests/vm/guest/ceph-lib.sh"
need_ceph
need_tcmud_rbd
load_target_stack
start_tcmud
rbd_image good0 64M
pool=$TCMUD_CEPH_POOL

# A keyring with the right names and a wrong key.
printf '[client.admin]\n\tkey = %s\n' "$(ceph-authtool --gen-print-key)" > /tmp/wrong.keyring
sed "s|^keyring = .*|keyring = /tmp/wrong.keyring|" "$CEPH_CONF" > /tmp/wrongkey.conf
# A mon that refuses every connection (guest loopback): tcmud's connect
# timeout must end the wait.
sed -e "s|^mon host = .*|mon host = [v2:127.0.0.1:3300,v1:127.0.0.1:6789]|" "$CEPH_CONF" > /tmp/nomon.conf

# refused NAME CFGSTRING CAUSE_REGEX BOUND_S
refused() {
	local name=$1 cfg=$2 cause=$3 bound=$4 before start rc out secs why
	before=$(tcmud_log_lines)
	start=$(date +%s)
	set +e
	out=$(try_create_user_backstore "$(scaled $((bound + 30)))" "$name" rbd "$cfg" $((64 << 20)))
	rc=$?
	set -e
	secs=$(($(date +%s) - start))
	[ $rc -ne 124 ] || fail "$name: the enable hung (more than $((bound + 30)) s)"
	[ $rc -ne 0 ] || fail "$name: a backstore with cfgstring '$cfg' was enabled ($out)"
	[ "$secs" -le "$(scaled "$bound")" ] || fail "$name: refused only after $secs s (bound $bound s)"
	why=$(tcmud_log_since "$before" "$cause")
	[ -n "$why" ] || fail "$name: tcmud's log does not name the cause /$cause/: $(tail -n +"$((before + 1))" "$TCMUD_LOG")"
	log "$name refused in $secs s: $(echo "$why" | head -1)"
	rmdir "$TARGET/core/user_0/$name" 2>/dev/null || true
}

refused nopool0 "$pool-nosuch/good0;conf=$CEPH_CONF" "no such pool" 30
refused noimage0 "$pool/nosuch;conf=$CEPH_CONF" "no such image" 30
refused nouser0 "$pool/good0;conf=$CEPH_CONF;id=nosuch" "client.nosuch.*(authentication|key)" 30
refused wrongkey0 "$pool/good0;conf=/tmp/wrongkey.conf" "authentication failed" 30
refused noconf0 "$pool/good0;conf=/tmp/missing.conf" "/tmp/missing.conf" 10
refused nomon0 "$pool/good0;conf=/tmp/nomon.conf" "no monitor at .*answered|cannot connect" 30
refused badopt0 "$pool/good0;conf=$CEPH_CONF;bogus=1" "bogus" 10

kill -0 "$TCMUD_PID" || fail "tcmud died"
dev=$(export_via_loop "$(create_user_backstore good0 rbd "$(rbd_cfg good0)" $((64 << 20)))")
fio_write_verify "$dev" 8M
log "a good image still serves after the refusals"
