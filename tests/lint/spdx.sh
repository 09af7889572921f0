#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every tracked file whose format has comments carries an
# SPDX-License-Identifier line in its first five lines (a shebang or an XML
# prologue may come first): GPL-2.0 for kernel code (kmod/, per
# debian/copyright, and tests/vm/provoke/), GPL-2.0-or-later elsewhere.
# Exempt, because a line there would change what the file is:
#   tests/fuzz/{corpus,crashers,known}/  fuzzer inputs, byte for byte
#   bench-results/, *.json, *.png        measurements and plots, generated
#   *.patch, kmod/series/*.txt           mails and patches (format-series.sh)
#   kmod/sparse-known.txt                a grep -Fx list: every line is a pattern
#   debian/changelog, debian/copyright,  formats without comments (copyright
#   debian/source/format                 states the licenses itself)
#   .keep                                empty placeholders
# Exit 77 (skip) outside a git checkout.
#   tests/lint/spdx.sh SRC
set -uo pipefail
cd "$1" || exit 1
git rev-parse --is-inside-work-tree > /dev/null 2>&1 || { echo "not a git checkout: skip"; exit 77; }
bad=0 checked=0
while IFS= read -r -d '' f; do
	case $f in
	tests/fuzz/corpus/* | tests/fuzz/crashers/* | tests/fuzz/known/* | bench-results/* | \
		*.json | *.png | *.patch | kmod/series/*.txt | kmod/sparse-known.txt | \
		debian/changelog | debian/copyright | debian/source/format | */.keep) continue ;;
	kmod/* | tests/vm/provoke/*) want='SPDX-License-Identifier: GPL-2\.0( |$)' ;;
	*) want='SPDX-License-Identifier: GPL-2\.0-or-later' ;;
	esac
	# A link is checked as its target.
	if [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
	checked=$((checked + 1))
	if ! head -n5 "$f" | grep -qE "$want"; then
		echo "$f: no '${want//\\/}' line in its first five lines"
		bad=$((bad + 1))
	fi
done < <(git ls-files -z)
echo "spdx: $checked files checked, $bad without the line"
[ "$bad" -eq 0 ]
