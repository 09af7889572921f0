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
# uio is not among them: the series leaves it unchanged, and the
# kernel's own uio.ko serves (Kbuild builds uio.o only where uio.c is).
files="Makefile MAINTAINERS drivers/target/target_core_user.c
	include/uapi/linux/target_core_user.h"
# shellcheck disable=SC2086 # one word per member: the names hold no blanks
members=$(printf "$top/%s " $files)
rm -rf tree x
# tar reads the whole xz stream up to the last member (87% of 1.5 GB for
# 6.12: 6.3 s of CPU, minutes in an emulated guest); tar-members.py
# decompresses only the xz blocks that hold them (0.8 s). Its one
# assumption, the archive's name order, is checked as it reads: when it
# misses, tar does the job.
# shellcheck disable=SC2086
if ! { command -v python3 > /dev/null &&
       python3 ./tar-members.py "$tarball" x $members; }; then
	rm -rf x
	mkdir x
	tar -xJf "$tarball" -C x --occurrence=1 $members ||
		fail "cannot extract the patched files from $tarball"
fi
mv "x/$top" tree
rm -rf x
v=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p; s/^SUBLEVEL = //p' tree/Makefile | paste -sd.)
[ "$v" = "$upstream" ] || fail "$tarball is Linux $v, not $upstream (kernel $kver)"

for p in patches/*.patch; do
	patch -d tree -p1 -s --batch --fuzz=0 --no-backup-if-mismatch < "$p" || fail "$p does not apply to $v"
done
# kbuild wants a flat module directory: sources at the top, headers below.
mkdir -p include/uapi/linux
cp tree/drivers/target/target_core_user.c .
cp tree/include/uapi/linux/*.h include/uapi/linux/
rm -rf tree
echo "tcmud-kmod: patched target_core_user.c of Linux $v from $tarball"
