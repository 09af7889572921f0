#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Send one battery of CDBs to a reference LUN (LIO fileio) and to a tcmud
LUN through SG_IO, and diff what comes back: status, sense key/ASC/ASCQ and
(where both must agree) the returned data.

usage: cdb_diff.py REF_SG TCMUD_SG KNOWN_MD
       cdb_diff.py --large-reads REF_BLOCKDEV TCMUD_BLOCKDEV

Both LUNs must hold the same 64 MiB (131072 blocks of 512 bytes). KNOWN_MD
is docs/scsi.md: its "Differences from LIO fileio" table lists, by name,
the differences that are kept on purpose, each with its clause. Exit status
1 if a difference is not listed there, or a listed one no longer differs
(the list must say exactly what is true), else 0.
"""
import ctypes
import fcntl
import os
import re
import struct
import sys

SG_IO = 0x2285
SG_DXFER_NONE, SG_DXFER_TO_DEV, SG_DXFER_FROM_DEV = -1, -2, -3
LAST_LBA = 131071


class sg_io_hdr(ctypes.Structure):
    _fields_ = [
        ("interface_id", ctypes.c_int), ("dxfer_direction", ctypes.c_int),
        ("cmd_len", ctypes.c_ubyte), ("mx_sb_len", ctypes.c_ubyte),
        ("iovec_count", ctypes.c_ushort), ("dxfer_len", ctypes.c_uint),
        ("dxferp", ctypes.c_void_p), ("cmdp", ctypes.c_void_p),
        ("sbp", ctypes.c_void_p), ("timeout", ctypes.c_uint),
        ("flags", ctypes.c_uint), ("pack_id", ctypes.c_int),
        ("usr_ptr", ctypes.c_void_p), ("status", ctypes.c_ubyte),
        ("masked_status", ctypes.c_ubyte), ("msg_status", ctypes.c_ubyte),
        ("sb_len_wr", ctypes.c_ubyte), ("host_status", ctypes.c_ushort),
        ("driver_status", ctypes.c_ushort), ("resid", ctypes.c_int),
        ("duration", ctypes.c_uint), ("info", ctypes.c_uint),
    ]


def sg_io(fd, cdb, data_in=0, data_out=b"", offset=None):
    """Returns (status, (key, asc, ascq) or None, data-in bytes). offset:
    read into a buffer that starts that many bytes into a page (the block
    layer maps a /dev/sdX caller's pages directly, so where the buffer
    starts decides how many segments the transfer takes)."""
    cdb_buf = ctypes.create_string_buffer(bytes(cdb), len(cdb))
    sense = ctypes.create_string_buffer(96)
    h = sg_io_hdr()
    h.interface_id = ord("S")
    h.cmd_len = len(cdb)
    h.cmdp = ctypes.addressof(cdb_buf)
    h.mx_sb_len = len(sense)
    h.sbp = ctypes.addressof(sense)
    h.timeout = 30000
    if data_out:
        buf = ctypes.create_string_buffer(bytes(data_out), len(data_out))
        h.dxfer_direction, h.dxfer_len = SG_DXFER_TO_DEV, len(data_out)
        h.dxferp = ctypes.addressof(buf)
    elif data_in and offset is not None:
        raw = ctypes.create_string_buffer(data_in + 2 * 4096)
        start = (ctypes.addressof(raw) + 4095) // 4096 * 4096 + offset
        h.dxfer_direction, h.dxfer_len = SG_DXFER_FROM_DEV, data_in
        h.dxferp = start
        buf = (ctypes.c_char * data_in).from_address(start)
    elif data_in:
        buf = ctypes.create_string_buffer(data_in)
        h.dxfer_direction, h.dxfer_len = SG_DXFER_FROM_DEV, data_in
        h.dxferp = ctypes.addressof(buf)
    else:
        h.dxfer_direction = SG_DXFER_NONE
    try:
        fcntl.ioctl(fd, SG_IO, h)
    except OSError as e:
        return ("errno", e.errno), None, b""
    if h.host_status or (h.driver_status & 0x0f and not h.status):
        return ("host", h.host_status, h.driver_status), None, b""
    s = sense.raw[:h.sb_len_wr]
    key = None
    if h.status == 2 and len(s) >= 4:
        if s[0] & 0x7f in (0x72, 0x73):
            key = (s[1] & 0x0f, s[2], s[3])
        elif len(s) >= 14:
            key = (s[2] & 0x0f, s[12], s[13])
    data = buf.raw[:max(0, h.dxfer_len - h.resid)] if data_in else b""
    return h.status, key, data


def be(n, width):
    return list(n.to_bytes(width, "big"))


def cdb10(op, lba, n, b1=0, b6=0):
    return [op, b1] + be(lba, 4) + [b6] + be(n, 2) + [0]


def cdb12(op, lba, n, b1=0):
    return [op, b1] + be(lba, 4) + be(n, 4) + [0, 0]


def cdb16(op, lba, n, b1=0, b14=0):
    return [op, b1] + be(lba, 8) + be(n, 4) + [b14, 0]


BLOCK = bytes(range(256)) * 2
# name: (cdb, data-in length, data-out bytes, compare data-in up to N bytes
# (0: status and sense only; None: all of it)). Writes go to LBAs 5000 and
# up, commands only tcmud accepts to 5100 and up, so what one LUN refused
# never shows up as different data in a later read.
BATTERY = [
    # valid commands
    ("test-unit-ready", [0, 0, 0, 0, 0, 0], 0, b"", 0),
    ("inquiry-standard", [0x12, 0, 0, 0, 96, 0], 96, b"", 1),
    ("inquiry-vpd-b0", [0x12, 1, 0xb0, 0, 64, 0], 64, b"", 4),
    ("inquiry-vpd-b1", [0x12, 1, 0xb1, 0, 64, 0], 64, b"", 0),
    ("inquiry-vpd-b2", [0x12, 1, 0xb2, 0, 64, 0], 64, b"", 0),
    ("inquiry-vpd-80", [0x12, 1, 0x80, 0, 255, 0], 255, b"", 0),
    ("inquiry-vpd-83", [0x12, 1, 0x83, 0, 255, 0], 255, b"", 0),
    ("read-capacity-10", [0x25] + [0] * 9, 8, b"", None),
    ("read-capacity-16", [0x9e, 0x10] + [0] * 8 + be(32, 4) + [0, 0], 32, b"", 14),
    ("mode-sense-6-all", [0x1a, 0, 0x3f, 0, 255, 0], 255, b"", 0),
    ("mode-sense-10-caching", [0x5a, 0, 0x08, 0, 0, 0, 0, 0, 255, 0], 255, b"", 0),
    ("request-sense", [0x03, 0, 0, 0, 18, 0], 18, b"", 3),
    ("report-opcodes-all", [0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0], 4096, b"", 0),
    ("report-opcodes-read10", [0xa3, 0x0c, 1, 0x28, 0, 0, 0, 0, 0, 64, 0, 0], 64, b"", None),
    ("read-10", cdb10(0x28, 0, 8), 4096, b"", None),
    ("read-12", cdb12(0xa8, 8, 8), 4096, b"", None),
    ("read-16", cdb16(0x88, 16, 8), 4096, b"", None),
    ("read-6", [0x08, 0, 0, 24, 8, 0], 4096, b"", None),
    ("write-10", cdb10(0x2a, 5000, 2), 0, BLOCK * 2, 0),
    ("read-back-10", cdb10(0x28, 5000, 2), 1024, b"", None),
    ("write-16-fua", cdb16(0x8a, 5002, 1, 0x08), 0, BLOCK, 0),
    ("verify-10-bytchk0", cdb10(0x2f, 0, 8), 0, b"", 0),
    ("verify-16-bytchk1", cdb16(0x8f, 5000, 2, 0x02), 0, BLOCK * 2, 0),
    ("verify-10-miscompare", cdb10(0x2f, 5000, 1, 0x02), 0, bytes(512), 0),
    ("write-verify-10", cdb10(0x2e, 5004, 1, 0x02), 0, BLOCK, 0),
    ("sync-cache-10", cdb10(0x35, 0, 0), 0, b"", 0),
    ("sync-cache-16", cdb16(0x91, 0, 0), 0, b"", 0),
    ("write-same-16", cdb16(0x93, 6000, 8), 0, BLOCK, 0),
    ("write-same-10", cdb10(0x41, 6008, 8), 0, BLOCK, 0),
    ("read-after-write-same", cdb10(0x28, 6000, 16), 8192, b"", None),
    ("unmap", [0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0], 0,
     bytes(be(22, 2) + be(16, 2) + [0] * 4 + be(7000, 8) + be(8, 4) + [0] * 4), 0),
    ("compare-and-write", cdb16(0x89, 5000, 0)[:13] + [1, 0, 0], 0, BLOCK + BLOCK, 0),
    ("compare-and-write-miscompare", cdb16(0x89, 5000, 0)[:13] + [1, 0, 0], 0,
     bytes(512) + BLOCK, 0),
    ("start-stop-unit", [0x1b, 0, 0, 0, 1, 0], 0, b"", 0),
    ("prevent-allow", [0x1e, 0, 0, 0, 0, 0], 0, b"", 0),
    ("verify-12", cdb12(0xaf, 0, 8), 0, b"", 0),
    ("write-verify-12", cdb12(0xae, 5100, 1), 0, BLOCK, 0),
    ("pre-fetch-10", cdb10(0x34, 0, 8), 0, b"", 0),
    ("pre-fetch-16", cdb16(0x90, 0, 8), 0, b"", 0),
    ("get-lba-status", [0x9e, 0x12] + be(0, 8) + be(64, 4) + [0, 0], 64, b"", 0),
    ("orwrite-16", cdb16(0x8b, 5102, 1), 0, BLOCK, 0),
    ("read-defect-data-10", [0x37, 0, 0x18, 0, 0, 0, 0, 0, 8, 0], 8, b"", 0),
    ("format-unit", [0x04, 0, 0, 0, 0, 0], 0, b"", 0),
    ("send-diagnostic-selftest", [0x1d, 0x04, 0, 0, 0, 0], 0, b"", 0),
    ("seek-10", [0x2b, 0, 0, 0, 0, 0, 0, 0, 0, 0], 0, b"", 0),
    ("write-atomic-16", [0x9c, 0] + be(5104, 8) + be(0, 2) + be(1, 2) + [0, 0], 0, BLOCK, 0),
    ("extended-copy-empty", [0x83, 0] + [0] * 8 + be(0, 4) + [0, 0], 0, b"", 0),
    ("receive-copy-results-params", [0x84, 0x03] + [0] * 8 + be(256, 4) + [0, 0], 256, b"", 0),
    # boundary values
    ("read-last-lba", cdb16(0x88, LAST_LBA, 1), 512, b"", None),
    ("read-past-last-lba", cdb16(0x88, LAST_LBA, 2), 1024, b"", 0),
    ("read-at-capacity-zero-length", cdb16(0x88, LAST_LBA + 1, 0), 0, b"", 0),
    ("read-beyond-capacity-zero-length", cdb16(0x88, LAST_LBA + 2, 0), 0, b"", 0),
    ("read-lba-overflow", cdb16(0x88, 2**64 - 1, 2), 1024, b"", 0),
    ("write-past-last-lba", cdb10(0x2a, LAST_LBA, 2), 0, BLOCK * 2, 0),
    ("read-10-zero-length", cdb10(0x28, 0, 0), 0, b"", 0),
    ("write-10-zero-length", cdb10(0x2a, 0, 0), 0, b"", 0),
    ("read-16-one-mib", cdb16(0x88, 0, 2048), 1 << 20, b"", None),
    ("read-16-max-plus-one", cdb16(0x88, 0, 16385), 512, b"", 0),
    ("read-10-buffer-short", cdb10(0x28, 0, 8), 512, b"", 0),
    ("write-same-zero-blocks", cdb16(0x93, 0, 0), 0, BLOCK, 0),
    ("verify-past-last-lba", cdb16(0x8f, LAST_LBA, 2), 0, b"", 0),
    ("sync-cache-past-last-lba", cdb10(0x35, LAST_LBA + 1, 1), 0, b"", 0),
    ("caw-two-blocks", cdb16(0x89, 0, 0)[:13] + [2, 0, 0], 0, BLOCK * 4, 0),
    # invalid fields
    ("unknown-opcode", [0xc5, 0, 0, 0, 0, 0], 0, b"", 0),
    ("inquiry-page-without-evpd", [0x12, 0, 0x80, 0, 64, 0], 64, b"", 0),
    ("inquiry-unknown-vpd", [0x12, 1, 0xc0, 0, 64, 0], 64, b"", 0),
    ("read-10-rdprotect", cdb10(0x28, 0, 1, 0x20), 512, b"", 0),
    ("read-10-reserved-bit", cdb10(0x28, 0, 1, 0x01), 512, b"", 0),
    ("read-10-naca", cdb10(0x28, 0, 1)[:9] + [0x04], 512, b"", 0),
    ("tur-reserved-byte", [0, 0, 0, 1, 0, 0], 0, b"", 0),
    ("service-action-in-bad-sa", [0x9e, 0x1f] + [0] * 8 + be(32, 4) + [0, 0], 32, b"", 0),
    ("maintenance-in-bad-sa", [0xa3, 0x1f, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0], 64, b"", 0),
    ("verify-10-bytchk-10b", cdb10(0x2f, 0, 1, 0x04), 0, BLOCK, 0),
    ("write-same-16-anchor", cdb16(0x93, 0, 1, 0x10), 0, BLOCK, 0),
    ("mode-select-6-no-pf", [0x15, 0, 0, 0, 4, 0], 0, bytes(4), 0),
    ("mode-select-10-bad-page", [0x55, 0x10, 0, 0, 0, 0, 0, 0, 12, 0], 0,
     bytes(8) + bytes([0x3e, 2, 0, 0]), 0),
    ("unmap-bad-list-length", [0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0], 0,
     bytes(be(40, 2) + be(16, 2) + [0] * 4 + be(0, 8) + be(1, 4) + [0] * 4), 0),
    ("unmap-past-last-lba", [0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0], 0,
     bytes(be(22, 2) + be(16, 2) + [0] * 4 + be(LAST_LBA, 8) + be(2, 4) + [0] * 4), 0),
    ("start-stop-power-condition", [0x1b, 0, 0, 0, 0x10, 0], 0, b"", 0),
    ("extended-copy-short-list", [0x83, 0] + [0] * 8 + be(8, 4) + [0, 0], 0, bytes(8), 0),
    ("extended-copy-lid4", [0x83, 0x01] + [0] * 8 + be(0, 4) + [0, 0], 0, b"", 0),
    ("receive-copy-results-failed-segment", [0x84, 0x04] + [0] * 8 + be(64, 4) + [0, 0],
     64, b"", 0),
]


def naa_of(fd):
    """The LUN's 16-byte NAA designator from VPD 0x83 (what a CSCD names)."""
    status, _, page = sg_io(fd, [0x12, 1, 0x83, 0, 255, 0], 255)
    at = 4
    while status == 0 and at + 4 <= len(page):
        kind, length = page[at + 1], page[at + 3]
        if kind & 0x3f == 0x03 and length == 16:  # LU association, NAA
            return page[at + 4:at + 20]
        at += 4 + length
    raise SystemExit("no 16-byte NAA designator in VPD 0x83")


def xcopy_list(naa, cscds=1, segments=((0, 0, 1, 0, 5110),), byte1=0):
    """An EXTENDED COPY (LID1) parameter list: `cscds` identification CSCD
    descriptors (E4h) naming the LUN itself by its NAA, with byte 1 as
    given, then block-to-block segments (src index, dst index, blocks, src
    LBA, dst LBA)."""
    cscd = bytes([0xe4, byte1, 0, 0, 0x01, 0x03, 0, 16]) + naa + bytes(4) + bytes(be(512, 4))
    segs = b"".join(bytes([0x02, 0] + be(24, 2) + be(si, 2) + be(di, 2) + [0, 0] + be(n, 2) +
                          be(sl, 8) + be(dl, 8)) for si, di, n, sl, dl in segments)
    return bytes([0, 0] + be(32 * cscds, 2) + [0] * 4 + be(len(segs), 4) + [0] * 4) + \
        cscd * cscds + segs


def xcopy(name, **kw):
    """A battery row whose data-out is built per LUN (each names itself)."""
    def data_out(naa):
        return xcopy_list(naa, **kw)
    length = len(xcopy_list(bytes(16), **kw))
    return (name, [0x83, 0] + [0] * 8 + be(length, 4) + [0, 0], 0, data_out, 0)


# EXTENDED COPY parameter lists that LIO's own copy manager accepts or
# refuses: both must answer alike (docs/scsi.md "EXTENDED COPY").
BATTERY += [
    xcopy("extended-copy-one-block"),
    # LU ID TYPE 10b and NUL: ignored by both (the NAA names the LUN).
    xcopy("extended-copy-lu-id-type-10b", byte1=0x80),
    xcopy("extended-copy-nul", byte1=0x20),
    # 17 CSCDs and 64 segments: past either copy manager's MAXIMUM
    # DESCRIPTOR LIST LENGTH, which comes before the counts.
    xcopy("extended-copy-lists-too-long", cscds=17, segments=((0, 0, 1, 0, 5110),) * 64),
    # A CSCD index past the list: COPY ABORTED, copy target not reachable.
    xcopy("extended-copy-index-past-list", segments=((1, 0, 1, 0, 5110),)),
    xcopy("extended-copy-another-peripheral-type", byte1=0x01),
    # 2048 blocks to the end of the LUN, then one READ(16) of them: a
    # 1 MiB transfer through SG_IO after the copy.
    xcopy("extended-copy-2048-to-end", segments=((0, 0, 2048, 0, LAST_LBA + 1 - 2048),)),
    ("read-16-one-mib-at-end", cdb16(0x88, LAST_LBA + 1 - 2048, 2048), 1 << 20, b"", None),
]


def known_differences(path):
    """Names in docs/scsi.md's differences table: rows `| \\`name\\` | ...`."""
    names, inside = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            inside = line.strip() == "## Differences from LIO fileio"
        elif inside:
            m = re.match(r"\|\s*`([a-z0-9-]+)`\s*\|", line)
            if m:
                names.add(m.group(1))
    return names


def show(result):
    status, sense, data = result
    s = f"status {status:#04x}" if isinstance(status, int) else f"transport error {status}"
    if sense:
        s += " sense %x/%02x/%02x" % sense
    return s + f", {len(data)} bytes"


def large_reads(ref_path, ours_path):
    """READ(16)s of 1 to 8 MiB (MAXIMUM TRANSFER LENGTH is 8 MiB) through
    SG_IO on the block devices, into page-aligned buffers and into buffers
    16 bytes into a page, as a conformance tool's malloc() gives: both LUNs
    must answer alike, with the same data. Where the initiator's own limits
    (tcm_loop's segments) refuse one, they refuse it for both."""
    ref, ours = os.open(ref_path, os.O_RDONLY), os.open(ours_path, os.O_RDONLY)
    bad = 0
    for mib in (1, 2, 4, 8):
        for offset in (0, 16):
            n = mib << 20
            cdb = cdb16(0x88, 0, n // 512)
            a, b = sg_io(ref, cdb, n, offset=offset), sg_io(ours, cdb, n, offset=offset)
            same = a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
            print(f"read-16-{mib}-mib-offset-{offset:<3} fileio: {show(a):40} tcmud: {show(b)}"
                  + ("" if same else "  DIFFERS"))
            bad += not same
    return 1 if bad else 0


def main():
    if sys.argv[1] == "--large-reads":
        return large_reads(sys.argv[2], sys.argv[3])
    ref = os.open(sys.argv[1], os.O_RDWR)
    ours = os.open(sys.argv[2], os.O_RDWR)
    known = known_differences(sys.argv[3])
    differing = set()
    naa = {ref: naa_of(ref), ours: naa_of(ours)}
    for name, cdb, din, dout, compare in BATTERY:
        a = sg_io(ref, cdb, din, dout(naa[ref]) if callable(dout) else dout)
        b = sg_io(ours, cdb, din, dout(naa[ours]) if callable(dout) else dout)
        why = []
        if a[0] != b[0] or a[1] != b[1]:
            why.append("status/sense")
        elif compare != 0:
            n = None if compare is None else compare
            if a[2][:n] != b[2][:n]:
                at = next((i for i, (x, y) in enumerate(zip(a[2], b[2])) if x != y),
                          min(len(a[2]), len(b[2])))
                why.append(f"data from byte {at}: {a[2][at:at + 8].hex()} vs "
                           f"{b[2][at:at + 8].hex()}")
        line = f"{name:34} fileio: {show(a):40} tcmud: {show(b)}"
        if why:
            differing.add(name)
            line += "  DIFFERS (" + ", ".join(why) + ")"
            line += " [documented]" if name in known else " [NOT DOCUMENTED]"
        print(line)
    unlisted = sorted(differing - known)
    stale = sorted(known - differing)
    print(f"{len(BATTERY)} commands, {len(differing)} differences, "
          f"{len(differing & known)} documented")
    if unlisted:
        print("differences missing from docs/scsi.md:", " ".join(unlisted))
    if stale:
        print("listed in docs/scsi.md but no longer different:", " ".join(stale))
    return 1 if unlisted or stale else 0


if __name__ == "__main__":
    sys.exit(main())
