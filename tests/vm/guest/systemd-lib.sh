# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the scenarios of the systemd guest (tests/vm/run --systemd),
# sourced after lib.sh: tcmud here is the packaged one, run by systemd.
[ "${TCMUD_VM_SYSTEMD:-0}" = 1 ] || { echo "needs the systemd guest (tests/vm/run --systemd)"; exit 77; }
# scripts/build-debs.sh's output; without it there is nothing to install.
TCMUD_DEBS=$TCMUD_BUILD/debs
ls "$TCMUD_DEBS"/tcmud_*_amd64.deb > /dev/null 2>&1 ||
	{ echo "no $TCMUD_DEBS/tcmud_*.deb: run scripts/build-debs.sh"; exit 77; }
# State a scenario keeps over a guest reboot (the disk is persistent).
STATE=/var/lib/tcmud-vm-test
mkdir -p $STATE
export DEBIAN_FRONTEND=noninteractive

tcmud_pid() { systemctl show -p MainPID --value tcmud; }

# wait_tcmud_active [OLD_PID] -> prints the main PID of an active tcmud
# other than OLD_PID, waiting up to 180 s for systemd to (re)start it.
# (Waits are bounded in time: under TCG one systemctl call can take 1 s.)
# shellcheck disable=SC2120 # OLD_PID is optional
wait_tcmud_active() {
	local pid end=$(( $(date +%s) + 180 ))
	while [ "$(date +%s)" -lt $end ]; do
		pid=$(tcmud_pid)
		if [ "$(systemctl is-active tcmud)" = active ] && [ "$pid" != 0 ] &&
		   [ "$pid" != "${1:-}" ]; then
			echo "$pid"
			return 0
		fi
		sleep 0.2
	done
	systemctl status tcmud --no-pager >&2 || true
	fail "tcmud did not become active${1:+ with a new main PID}"
}

# Lines of this boot's tcmud journal matching the extended regex $1 (its
# messages read "tcmud info: file/disk0: ...").
journal_count() { journalctl -b -u tcmud -o cat --no-pager | grep -cE -- "$1" || true; }

# wait_journal REGEX COUNT: until this boot's tcmud journal has COUNT
# matches, 120 s at most.
wait_journal() {
	local end=$(( $(date +%s) + 120 ))
	while [ "$(date +%s)" -lt $end ]; do
		[ "$(journal_count "$1")" -ge "$2" ] && return 0
		sleep 0.2
	done
	journalctl -b -u tcmud -o cat --no-pager | tail -n 20 >&2
	fail "tcmud's journal never had $2 line(s) matching /$1/"
}

# sd_of_loopback WWN: waits for the /dev/sdX of LUN 0 behind a tcm_loop target.
sd_of_loopback() {
	local addr sd end=$(( $(date +%s) + 120 ))
	while [ "$(date +%s)" -lt $end ]; do
		addr=$(cat "$TARGET/loopback/$1/tpgt_1/address" 2>/dev/null || true)
		sd=""
		[ -z "$addr" ] || sd=$(ls "/sys/bus/scsi/devices/$addr:0/block" 2>/dev/null || true)
		[ -n "$sd" ] && [ -b "/dev/$sd" ] && { echo "/dev/$sd"; return 0; }
		sleep 0.2
	done
	fail "no /dev/sdX behind loopback $1"
}

# apt with no package lists: the guest's dependencies are the host's
# installed packages, and parsing the host's 19 MB of lists (Debian's docker
# image keeps no pkgcache.bin) took apt 130 s of a TCG guest per call.
apt_local() {
	apt-get -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/dev/null \
		-y -q --no-install-recommends "$@"
}
