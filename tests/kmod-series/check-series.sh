#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel series (kmod/patches) stays acceptable to the uio maintainer,
# who refused ioctls in uio in Feb 2022: no patch touches drivers/uio or
# include/linux/uio_driver.h, and none adds an ioctl anywhere. Every patch
# has a Signed-off-by; the patch that adds the multi-queue ABI links the
# 2022 threads; the mailed copy in kmod/series has the same diffs.
#
#   check-series.sh SRC_DIR
set -euo pipefail
src=${1:?usage: $0 SRC_DIR}
fail() { echo "check-series: $*" >&2; exit 1; }
shopt -s nullglob
patches=("$src"/kmod/patches/*.patch)
[ ${#patches[@]} -gt 0 ] || fail "no patches in $src/kmod/patches"
for p in "${patches[@]}"; do
	name=$(basename "$p")
	if grep -qE '^diff --git a/(drivers/uio/|include/linux/uio_driver\.h)' "$p"; then
		fail "$name changes uio"
	fi
	if grep -nE '^\+.*(ioctl|_IO[RW]*\()' "$p"; then
		fail "$name adds an ioctl"
	fi
	grep -q '^Signed-off-by: ' "$p" || fail "$name has no Signed-off-by"
done
grep -l 'lore.kernel.org/all/1645064962-94123-1-git-send-email-kanie@linux.alibaba.com' \
	"${patches[@]}" > /dev/null || fail "no patch links the Feb 2022 uio ioctl thread"
# The mail must carry exactly the patches build.sh applies.
# (every numbered mail but the cover letter, v2-0000: 0010 is a patch too)
mails=()
for m in "$src"/kmod/series/v2-[0-9][0-9][0-9][0-9]-*.patch; do
	[[ $(basename "$m") == v2-0000-* ]] || mails+=("$m")
done
[ ${#mails[@]} -eq ${#patches[@]} ] ||
	fail "kmod/series has ${#mails[@]} patches, kmod/patches ${#patches[@]}: run kmod/format-series.sh"
for i in "${!patches[@]}"; do
	if ! cmp -s <(sed -n '/^diff --git/,$p' "${patches[$i]}") \
		    <(sed -n '/^diff --git/,$p' "${mails[$i]}"); then
		fail "$(basename "${mails[$i]}") differs from $(basename "${patches[$i]}"): run kmod/format-series.sh"
	fi
done
echo "check-series: ${#patches[@]} patches, no uio change, no ioctl, mail in sync"
