#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# DKMS PRE_BUILD step of tcmud-kmod: fills the DKMS build directory (the
# current directory) with the kernel files our patches change, taken from
# the installed linux-source tarball of the kernel being built for, then
# applies patches/*.patch. No kernel file is shipped with the DKMS source:
# only our patches, Kbuild and this script.
#
#   dkms-prepare.sh KERNELVER        (dkms.conf: PRE_BUILD)
#
# $TCMUD_LINUX_SOURCE names another tarball (kmod/dkms-check.sh uses the
# test bed's cached one); by default the linux-source-X.Y package's
# /usr/src/linux-source-X.Y.tar.xz. The tarball's Makefile must give the
# same X.Y.Z as KERNELVER, or the patched files would not match the headers.
set -eu
kver=${1:?usage: dkms-prepare.sh KERNELVER}
upstream=${kver%%[+-]*}                 # 6.12.117
series=$(echo "$upstream" | cut -d. -f1,2)
tarball=${TCMUD_LINUX_SOURCE:-/usr/src/linux-source-$series.tar.xz}
fail() { echo "tcmud-kmod: $*" >&2; exit 1; }
[ -f "$tarball" ] || fail "no $tarball: install linux-source-$series (the source of $kver)"

top=$(basename "$tarball" .tar.xz)
files="Makefile MAINTAINERS drivers/uio/uio.c include/linux/uio_driver.h
	drivers/target/target_core_user.c include/uapi/linux/target_core_user.h"
rm -rf tree
mkdir tree
# shellcheck disable=SC2046 # one word per member: the names hold no blanks
tar -xJf "$tarball" -C tree --strip-components=1 $(for f in $files; do echo "$top/$f"; done) ||
	fail "cannot extract the patched files from $tarball"
v=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p; s/^SUBLEVEL = //p' tree/Makefile | paste -sd.)
[ "$v" = "$upstream" ] || fail "$tarball is Linux $v, not $upstream (kernel $kver)"

for p in patches/*.patch; do
	patch -d tree -p1 -s --batch --fuzz=0 --no-backup-if-mismatch < "$p" || fail "$p does not apply to $v"
done
# kbuild wants a flat module directory: sources at the top, headers below.
mkdir -p include/linux include/uapi/linux
cp tree/drivers/uio/uio.c tree/drivers/target/target_core_user.c .
cp tree/include/linux/uio_driver.h include/linux/
cp tree/include/uapi/linux/*.h include/uapi/linux/
rm -rf tree
echo "tcmud-kmod: patched uio.c and target_core_user.c of Linux $v from $tarball"
