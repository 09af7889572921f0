#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# with-ceph.sh SRCDIR PROGRAM [ARGS...]: runs PROGRAM against a live
# one-node Ceph, with CEPH_CONF (client.admin) and TCMUD_RBD_TEST_OSD_PID
# set, and tears the cluster down afterwards.
#   TCMUD_RBD_TEST_CONF=PATH  use that running cluster instead (its OSD pid
#                             from TCMUD_RBD_TEST_OSD_PID, if set)
# Otherwise scripts/ceph-testbed.sh brings up a memstore cluster in a
# network namespace of its own. Exit 77 (skip) where that cannot be done:
# no testbed script, no ceph binaries, no root or no namespaces.
set -u
src=$1
shift
if [ -n "${TCMUD_RBD_TEST_CONF:-}" ]; then
	export CEPH_CONF=$TCMUD_RBD_TEST_CONF
	exec "$@"
fi
testbed=$src/scripts/ceph-testbed.sh
[ -x "$testbed" ] || { echo "with-ceph: SKIP: no $testbed"; exit 77; }
for b in ceph-mon ceph-osd ceph rbd; do
	command -v "$b" >/dev/null || { echo "with-ceph: SKIP: no $b (scripts/install-deps.sh)"; exit 77; }
done
dir=$(mktemp -d /var/tmp/tcmud-rbd-unit.XXXXXX)
# Its own namespace and subnet, so a VM test bed may run at the same time.
args=(--dir "$dir" --netns "tcmud-rbdu$$" --subnet "10.214.$(( $$ % 200 + 20 ))" --image disk0:64M)
# A mgr where ceph-mgr is installed, for the service-map case
# (TCMUD_RBD_TEST_MGR=1 tells the tests; without it they skip that case).
if command -v ceph-mgr > /dev/null; then
	args+=(--mgr)
	export TCMUD_RBD_TEST_MGR=1
fi
down() { "$testbed" "${args[@]}" down >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap down EXIT
t0=$(date +%s.%N)
"$testbed" "${args[@]}" up >"$dir.up.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$dir.up.log"
	rm -f "$dir.up.log"
	[ $rc -eq 77 ] && exit 77
	echo "with-ceph: cluster bring-up failed ($rc)"
	exit 1
fi
rm -f "$dir.up.log"
echo "with-ceph: cluster up in $(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}') s"
set -a
eval "$("$testbed" "${args[@]}" env)"
set +a
TCMUD_RBD_TEST_OSD_PID=$(cat "$dir/run/osd.0.pid")
export TCMUD_RBD_TEST_OSD_PID
"$@"
