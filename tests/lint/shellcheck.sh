#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every shell script of the tree is shellcheck-clean at the default
# severity (style notes included), with the settings of .shellcheckrc
# (sourced files followed from the root). Exit 77 (skip) where
# the shellcheck program is missing or SRC is not a git checkout.
#   tests/lint/shellcheck.sh SRC
set -uo pipefail
src=$1
command -v shellcheck > /dev/null || { echo "no shellcheck: skip"; exit 77; }
git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1 ||
	{ echo "$src is not a git checkout: skip"; exit 77; }
mapfile -t files < <("$(dirname "$0")/shell-files.sh" "$src")
[ ${#files[@]} -gt 0 ] || { echo "no shell scripts found in $src"; exit 1; }
cd "$src" || exit 1
if shellcheck -f gcc "${files[@]}"; then
	echo "shellcheck: ${#files[@]} scripts clean"
else
	echo "shellcheck: findings above (${#files[@]} scripts checked)"
	exit 1
fi
