#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tcmud's command line as tcmu-runner's unit overrides and scripts use it
# (-d, -l DIR, --tcmu-log-dir, TCMU_LOGDIR, -f, --handler-path), and
# --check-config, read back from what --check-config says a daemon would
# run with. Nothing is started.
#   compat-options.sh TCMUD
set -uo pipefail
tcmud=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
: > "$dir/empty.conf"
failures=0
# expect DESCRIPTION REGEX ARGS...: tcmud ARGS --check-config exits 0 and
# prints a line matching REGEX.
expect() {
	local what=$1 want=$2 out
	shift 2
	if ! out=$("$tcmud" "$@" --check-config "$dir/empty.conf" 2>&1); then
		echo "FAIL $what: exit status $?: $out"; failures=$((failures + 1)); return
	fi
	grep -qE "$want" <<< "$out" || { echo "FAIL $what: no /$want/ in: $out"; failures=$((failures + 1)); return; }
	echo "ok   $what"
}
expect "-d is debug" '^log_level = debug$' -d
expect "--debug is debug" '^log_level = debug$' --debug
expect "-l LEVEL" '^log_level = warn$' -l warn
expect "-l DIR is tcmu-runner's log directory" '^log_dir = /var/tmp/x$' -l /var/tmp/x
expect "--tcmu-log-dir" '^log_dir = /srv/logs$' --tcmu-log-dir /srv/logs
expect "--handler-path is ignored, with a note" 'handlers are built in' --handler-path /usr/lib/tcmu-runner
expect "-f N" '^log_level = info$' -f 4096

# TCMU_LOGDIR under the command line.
out=$(TCMU_LOGDIR=/from/env "$tcmud" --check-config "$dir/empty.conf" 2>&1)
grep -q '^log_dir = /from/env$' <<< "$out" || { echo "FAIL TCMU_LOGDIR: $out"; failures=$((failures + 1)); }
out=$(TCMU_LOGDIR=/from/env "$tcmud" --log-dir /cli --check-config "$dir/empty.conf" 2>&1)
grep -q '^log_dir = /cli$' <<< "$out" || { echo "FAIL --log-dir over TCMU_LOGDIR: $out"; failures=$((failures + 1)); }
# Refusals: a level that is neither, and a bad file, with its line.
"$tcmud" -l loud --check-config "$dir/empty.conf" > /dev/null 2>&1
[ $? = 2 ] || { echo "FAIL -l loud was not a usage error"; failures=$((failures + 1)); }
printf 'log_level = info\nmax_in_flight = 0\n' > "$dir/bad.conf"
out=$("$tcmud" --check-config "$dir/bad.conf" 2>&1)
rc=$?
if [ $rc != 1 ] || ! grep -q "bad.conf:2: max_in_flight" <<< "$out"; then
	echo "FAIL --check-config on a bad file (exit $rc): $out"
	failures=$((failures + 1))
fi
echo "$failures failure(s)"
[ "$failures" = 0 ]
