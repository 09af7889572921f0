# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the Ceph (rbd) scenarios, sourced after lib.sh. The cluster
# runs on the host in a network namespace of its own (tests/vm/run --ceph,
# scripts/ceph-testbed.sh); the guest reaches its daemons over QEMU's user
# network and the host agent (tests/vm/ceph-agent.py) at TCMUD_CEPH_AGENT for
# what only the host can do: stop or start a daemon, or act as another
# librbd client of the same image.

# need_ceph: skip (77) a scenario booted without the test bed.
need_ceph() {
	if [ -z "${TCMUD_CEPH_AGENT:-}" ] || [ -z "${CEPH_CONF:-}" ]; then
		echo "SKIP: no Ceph test bed in this boot (tests/vm/run --ceph STORE)"
		exit 77
	fi
	[ -r "$CEPH_CONF" ] || fail "cannot read $CEPH_CONF"
}

# host_ceph WORDS...: runs "rbd ...", "ceph ..." or "testbed stop|start
# [osd|mon|all]" on the host; prints its output, returns its exit status.
host_ceph() {
	local fd line rc=255
	exec {fd}<>"/dev/tcp/${TCMUD_CEPH_AGENT%:*}/${TCMUD_CEPH_AGENT#*:}" ||
		fail "cannot reach the host's ceph agent at $TCMUD_CEPH_AGENT"
	printf '%q ' "$@" >&"$fd"
	printf '\n' >&"$fd"
	while IFS= read -r line <&"$fd"; do
		if [[ $line =~ ^@rc=([0-9]+)$ ]]; then rc=${BASH_REMATCH[1]}; else printf '%s\n' "$line"; fi
	done
	exec {fd}>&-
	return "$rc"
}

# rbd_image NAME SIZE: a fresh image NAME in the test bed's pool.
rbd_image() {
	host_ceph rbd rm --no-progress "$TCMUD_CEPH_POOL/$1" >/dev/null 2>&1 || true
	host_ceph rbd create --size "$2" "$TCMUD_CEPH_POOL/$1" || fail "rbd create $1 on the host"
}

# image_md5 NAME OFFSET LENGTH: md5 of a range of the image, read on the
# host through librbd (what the cluster holds, not what a gateway caches).
image_md5() {
	host_ceph md5 "$TCMUD_CEPH_POOL/$1" "$2" "$3"
}

# start_tcmu_runner: Debian's tcmu-runner in the background, logging to
# /var/log/tcmu, once its rbd handler is registered; RUNNER_PID.
start_tcmu_runner() {
	mkdir -p /etc/tcmu /var/log/tcmu
	tcmu-runner -l /var/log/tcmu &
	RUNNER_PID=$!
	stop_on_exit $RUNNER_PID
	for _ in $(seq "$(scaled 50)"); do
		# A device added while it still loads its handlers (the rbd one takes
		# seconds) can fail its enable.
		grep -q "Handler rbd is registered" /var/log/tcmu/tcmu-runner.log 2>/dev/null && break
		kill -0 $RUNNER_PID || fail "tcmu-runner exited at start"
		sleep 0.2
	done
}

# need_tcmud_rbd: skip (77) where tcmud was built without librbd.
# (grep reads all of ldd's output: with grep -q, ldd can die of SIGPIPE
# and pipefail turns a match into a skip.)
need_tcmud_rbd() {
	ldd "$TCMUD_BUILD/daemon/core/tcmud" | grep librbd >/dev/null || {
		echo "SKIP: tcmud built without the rbd handler (no librbd-dev at build time)"
		exit 77
	}
}

# rbd_cfg IMAGE [OPTIONS]: the cfgstring of IMAGE in the test bed's pool.
rbd_cfg() { echo "$TCMUD_CEPH_POOL/$1;conf=$CEPH_CONF${2:+;$2}"; }

# ack_md5 FIRST COUNT: md5 of the bytes ack-io.py writes to blocks
# FIRST..FIRST+COUNT-1, to compare with image_md5 on the host.
ack_md5() {
	python3 - "$1" "$2" <<'PY'
import hashlib, sys
first, count = int(sys.argv[1]), int(sys.argv[2])
md5 = hashlib.md5()
for b in range(first, first + count):
    word = b.to_bytes(8, "little") + b"tcmud-ak"
    md5.update(word * (4096 // len(word)))
print(f"{md5.hexdigest()}  -")
PY
}

# tcmud_log_since LINE PATTERN: tcmud's log lines after line LINE that match.
tcmud_log_since() { tail -n +"$(($1 + 1))" "$TCMUD_LOG" | grep -E -- "$2" || true; }
tcmud_log_lines() { wc -l < "$TCMUD_LOG"; }

# try_create_user_backstore BOUND_S NAME SUBTYPE CFGSTRING SIZE: what
# create_user_backstore does, in a process of its own (its own set -e, so a
# refused enable stops it there; no clean-up trap) under a time bound.
# Prints its output; returns its status (124: the enable hung).
try_create_user_backstore() {
	local bound=$1; shift
	# shellcheck disable=SC2016 # expanded by the inner bash
	timeout "$bound" bash -c '. "$TCMUD_SRC/tests/vm/guest/lib.sh"; trap - EXIT
		create_user_backstore "$@"' create "$@" 2>&1
}

# etc_ceph_gateway: what an administrator puts in /etc/ceph on a gateway:
# the monitors and the gateway user's key (librados finds
# /etc/ceph/ceph.client.tcmud.keyring itself); prints the cfgstring options
# that use them (";conf=/etc/ceph/ceph.conf;id=tcmud").
etc_ceph_gateway() {
	mkdir -p /etc/ceph
	printf '[global]\nfsid = %s\nmon host = %s\n' \
		"$(sed -n 's/^fsid = //p' "$CEPH_CONF")" "$TCMUD_CEPH_MON_HOST" > /etc/ceph/ceph.conf
	(umask 077 && printf '[client.tcmud]\n\tkey = %s\n' \
		"$(ceph-authtool -p -n client.tcmud "$TCMUD_CEPH_KEYRING")" > /etc/ceph/ceph.client.tcmud.keyring)
	echo ";conf=/etc/ceph/ceph.conf;id=tcmud"
}
