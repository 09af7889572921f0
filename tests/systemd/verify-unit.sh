#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Checks systemd/tcmud.service (and tcmud-metrics.socket with its service)
# the way systemd itself reads them, offline:
# `systemd-analyze verify` on the unit as meson configures it (ExecStart
# pointed at the tcmud just built, so the check that the binary exists is a
# real one; ExecReload at the tcmudctl just built). systemd-analyze exits 0
# even for a directive it ignores, so any
# line it prints fails the test: a misspelt key or value would otherwise
# silently drop hardening or change the service type.
#   verify-unit.sh UNIT_TEMPLATE TCMUD_BINARY TCMUDCTL_BINARY
set -euo pipefail
template=$1 tcmud=$2 tcmudctl=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed -e "s|@SBINDIR@/tcmudctl |$tcmudctl |" -e "s|@SBINDIR@/tcmud\$|$tcmud|" "$template" > "$dir/tcmud.service"
grep -q "^ExecStart=$tcmud\$" "$dir/tcmud.service" || { echo "no ExecStart=@SBINDIR@/tcmud in $template"; exit 1; }
# A refused configuration must fail `systemctl reload`: tcmudctl reload
# waits for the daemon's answer (a bare kill -HUP always succeeds).
grep -q "^ExecReload=$tcmudctl reload " "$dir/tcmud.service" ||
	{ echo "no ExecReload=@SBINDIR@/tcmudctl reload in $template"; exit 1; }
out=$(cd "$dir" && systemd-analyze verify --man=no ./tcmud.service 2>&1) || {
	echo "$out"; echo "systemd-analyze verify failed"; exit 1; }
if [ -n "$out" ]; then
	echo "$out"
	echo "systemd-analyze printed the lines above: a directive is wrong or ignored"
	exit 1
fi
# The settings the README and docs/admin.md promise, as systemd parsed them.
for want in Type=notify Restart=on-failure "Before=rtslib-fb-targetctl.service target.service" \
	RuntimeDirectory=tcmud; do
	grep -qx "$want" "$dir/tcmud.service" || { echo "tcmud.service lacks $want"; exit 1; }
done
echo "tcmud.service: systemd-analyze verify clean"

# tcmud-metrics.socket and the per-connection service it starts (Accept=yes
# wants the template next to it), ExecStart at the tcmudctl just built.
units=$(dirname "$template")
cp "$units/tcmud-metrics.socket" "$dir/"
sed -e "s|@SBINDIR@/tcmudctl |$tcmudctl |" "$units/tcmud-metrics@.service.in" > "$dir/tcmud-metrics@.service"
grep -q "^ExecStart=$tcmudctl metrics --http\$" "$dir/tcmud-metrics@.service" ||
	{ echo "no ExecStart=@SBINDIR@/tcmudctl metrics --http in tcmud-metrics@.service.in"; exit 1; }
for unit in tcmud-metrics.socket tcmud-metrics@.service; do
	out=$(cd "$dir" && systemd-analyze verify --man=no "./$unit" 2>&1) || {
		echo "$out"; echo "systemd-analyze verify $unit failed"; exit 1; }
	[ -z "$out" ] || { echo "$out"; echo "systemd-analyze printed the lines above for $unit"; exit 1; }
done
# Localhost only, one process per connection.
for want in ListenStream=127.0.0.1:9574 Accept=yes; do
	grep -qx "$want" "$dir/tcmud-metrics.socket" || { echo "tcmud-metrics.socket lacks $want"; exit 1; }
done
echo "tcmud-metrics.socket, tcmud-metrics@.service: systemd-analyze verify clean"
