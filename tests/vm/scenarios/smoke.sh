# SPDX-License-Identifier: GPL-2.0-or-later
# The guest comes up with the host's tools and the pinned kernel's modules.
set -eu
uname -r
modprobe configfs
lsmod | head
command -v fio sg_inq targetcli
