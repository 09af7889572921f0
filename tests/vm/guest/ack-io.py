#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Acknowledged-write bookkeeping for the fault scenarios.
#   ack-io.py write DEV FIRST COUNT STATE
#       writes 4 KiB blocks FIRST.. FIRST+COUNT-1 (O_DIRECT, one pwrite
#       each, a pattern naming the block), keeps going after errors, appends
#       every block whose write succeeded to STATE, and prints
#       "acked N failed M errnos E1,E2".
#   ack-io.py verify DEV STATE
#       reads back every block in STATE; exit 1 unless each holds its pattern.
import errno
import mmap
import os
import sys

BLOCK = 4096


def pattern(block):
    word = block.to_bytes(8, "little") + b"tcmud-ak"
    return word * (BLOCK // len(word))


def write(dev, first, count, state):
    buf = mmap.mmap(-1, BLOCK)  # page aligned, as O_DIRECT wants
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
    acked, failed, errnos = [], 0, set()
    for b in range(first, first + count):
        buf[:] = pattern(b)
        try:
            if os.pwrite(fd, buf, b * BLOCK) != BLOCK:
                raise OSError(errno.EIO, "short write")
            acked.append(b)
        except OSError as e:
            failed += 1
            errnos.add(errno.errorcode.get(e.errno, str(e.errno)))
    os.close(fd)
    with open(state, "a") as f:
        f.writelines(f"{b}\n" for b in acked)
    print(f"acked {len(acked)} failed {failed} errnos {','.join(sorted(errnos)) or '-'}")


def verify(dev, state):
    blocks = [int(x) for x in open(state).read().split()]
    buf = mmap.mmap(-1, BLOCK)
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    bad = [b for b in blocks if os.preadv(fd, [buf], b * BLOCK) != BLOCK or buf[:] != pattern(b)]
    os.close(fd)
    print(f"verified {len(blocks) - len(bad)} of {len(blocks)} acknowledged blocks")
    if bad:
        print(f"lost or changed: {bad[:16]}")
        sys.exit(1)


if sys.argv[1] == "write":
    write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
else:
    verify(sys.argv[2], sys.argv[3])
