#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The example Prometheus alert rules of docs/admin.md (its one ```yaml block)
# pass `promtool check rules`. Skips (77) without Debian's prometheus package.
#   check-alert-rules.sh docs/admin.md
set -euo pipefail
command -v promtool > /dev/null || { echo "no promtool (package prometheus)"; exit 77; }
rules=$(mktemp --suffix=.yml)
trap 'rm -f "$rules"' EXIT
awk '/^```yaml/ { f = 1; next } /^```/ { f = 0 } f' "$1" > "$rules"
[ -s "$rules" ] || { echo "no \`\`\`yaml block in $1"; exit 1; }
promtool check rules "$rules"
