#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Atomic-write helpers for tcmud-xcopy-atomic.sh (Python 3.11 has neither
# STATX_WRITE_ATOMIC nor RWF_ATOMIC, so both are spelled out here).
#   atomic_io.py statx PATH          -> "unit_min unit_max segments_max" or "none"
#   atomic_io.py pwrite DEV OFF LEN  -> one O_DIRECT pwritev2(RWF_ATOMIC) of a
#                                       pattern, then reads it back and compares
import ctypes
import mmap
import os
import sys

AT_EMPTY_PATH = 0x1000
STATX_WRITE_ATOMIC = 0x00010000
RWF_ATOMIC = 0x00000040


def statx(path):
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(256)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.statx(fd, b"", AT_EMPTY_PATH, STATX_WRITE_ATOMIC, buf) != 0:
            return "error " + os.strerror(ctypes.get_errno())
    finally:
        os.close(fd)
    raw = buf.raw
    mask = int.from_bytes(raw[0:4], "little")
    if not mask & STATX_WRITE_ATOMIC:
        return "none"
    u = [int.from_bytes(raw[o:o + 4], "little") for o in (168, 172, 176)]
    return "%d %d %d" % tuple(u)


def pwrite(dev, off, length):
    fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
    buf = mmap.mmap(-1, length)  # page aligned, as O_DIRECT wants
    pattern = bytes((i * 7 + off) & 0xff for i in range(length))
    buf.write(pattern)
    n = os.pwritev(fd, [buf], off, RWF_ATOMIC)
    if n != length:
        sys.exit("short atomic write: %d" % n)
    back = mmap.mmap(-1, length)
    os.preadv(fd, [back], off)
    os.close(fd)
    if back[:] != pattern:
        sys.exit("atomic write read back different data")
    print("ok")


if __name__ == "__main__":
    if sys.argv[1] == "statx":
        print(statx(sys.argv[2]))
    else:
        pwrite(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
