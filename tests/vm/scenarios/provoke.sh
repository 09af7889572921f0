# SPDX-License-Identifier: GPL-2.0-or-later
# Run only by tests/vm/debug-selfcheck.sh, under the names provoke-KIND (links
# to this file), on the debug kernel: loads tests/vm/provoke's module so that
# one checker (KIND: kasan, lockdep, sleep, list, ubsan) reports once. The
# scenario itself succeeds; the self-check expects the verdict to fail it on
# that report. Skips (77) on any other kernel or with no module built.
. "$TCMUD_SRC/tests/vm/guest/lib.sh"
kind=${TCMUD_SCENARIO#provoke-}
ko=$TCMUD_BUILD/provoke-debug/tcmud_provoke.ko
case $(uname -r) in *-tcmud-debug) ;; *) echo "not the debug kernel: skip"; exit 77 ;; esac
[ -f "$ko" ] || { echo "no $ko (tests/vm/debug-selfcheck.sh builds it): skip"; exit 77; }
# The module provokes, then refuses to stay loaded (EAGAIN).
if insmod "$ko" kind="$kind" 2> /tmp/provoke.err; then
	fail "tcmud_provoke stayed loaded"
fi
grep -q 'Resource temporarily unavailable' /tmp/provoke.err || fail "insmod: $(cat /tmp/provoke.err)"
log "provoked $kind"
