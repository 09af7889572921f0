#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Prints the repository's shell scripts, one a line, relative to SRC: every
# tracked *.sh and every tracked file whose first line names bash or sh
# (tests/vm/run, tests/vm/verdict, .ci/run, the initramfs inits).
#   tests/lint/shell-files.sh SRC
set -euo pipefail
cd "$1"
git ls-files -z | while IFS= read -r -d '' f; do
	case $f in
	tests/fuzz/corpus/*) continue ;;
	*.sh) echo "$f" ;;
	*) [ -f "$f" ] && head -n1 "$f" | grep -qE '^#!.*(/|env |busybox )(ba)?sh\b' && echo "$f" ;;
	esac
done
