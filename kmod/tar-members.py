#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Extracts a few regular files from a name-sorted, multi-block .tar.xz
(Debian's linux-source-X.Y.tar.xz: 62 independent xz blocks of 24 MiB)
by decompressing only the blocks that hold them.

    tar-members.py TARBALL DESTDIR MEMBER...

`tar -xJf TARBALL MEMBER...` decompresses the whole 1.5 GB stream, even
with --occurrence (the last file dkms-prepare.sh needs lies at 87% of it):
minutes of emulated CPU in a test guest. Here the xz index gives each
block's offsets; the first tar header near the start of each block gives
the name it begins with; each member is then looked for from the last block
that begins at or before its name in the archive's order, reading on into
the following blocks as needed. Every member is checked by name as tarfile
parses it, so a wrong guess about the order can only cost a miss: the exit
status is then 1 and the caller falls back to tar. Files land under
DESTDIR with their archive names; nothing else is written.
"""
import io
import lzma
import os
import struct
import sys
import tarfile

PROBE = 256 << 10      # bytes of each block searched for its first header
CHUNK = 1 << 20        # compressed bytes fed to liblzma at a time


def varint(buf, pos):
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7f) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def xz_blocks(f):
    """(stream header, [(compressed offset, compressed size, uncompressed
    size)]) of a single-stream .xz file, from its index."""
    header = f.read(12)
    if header[:6] != b'\xfd7zXZ\x00':
        raise ValueError('not an xz file')
    size = f.seek(0, os.SEEK_END)
    f.seek(size - 12)
    footer = f.read(12)
    if footer[10:12] != b'YZ' or footer[8:10] != header[6:8]:
        raise ValueError('no single xz stream (footer)')
    backward = (struct.unpack('<I', footer[4:8])[0] + 1) * 4
    f.seek(size - 12 - backward)
    index = f.read(backward)
    if index[0] != 0:
        raise ValueError('no xz index')
    count, pos = varint(index, 1)
    blocks, offset = [], 12
    for _ in range(count):
        unpadded, pos = varint(index, pos)
        usize, pos = varint(index, pos)
        csize = (unpadded + 3) & ~3
        blocks.append((offset, csize, usize))
        offset += csize
    if offset != size - 12 - backward:
        raise ValueError('xz blocks do not add up (several streams?)')
    return header, blocks


DECOMPRESSED = [0]     # bytes liblzma produced, for the closing line


class Blocks(io.RawIOBase):
    """The decompressed archive from block `first`, `skip` bytes in,
    decompressed lazily and on across the following blocks."""

    def __init__(self, f, header, blocks, first, skip=0, step=CHUNK):
        super().__init__()
        self.step = step           # most bytes decompressed per call
        self.f, self.header, self.blocks = f, header, blocks
        self.block, self.skip, self.pending = first - 1, skip, b''
        self.left = 0
        self.consumed = 0          # decompressed bytes handed out

    def _next_block(self):
        self.block += 1
        if self.block >= len(self.blocks):
            return False
        offset, self.cleft, self.left = self.blocks[self.block]
        self.f.seek(offset)
        self.dec = lzma.LZMADecompressor(lzma.FORMAT_XZ)
        # A block alone behind the stream header decodes as the start of a
        # stream; the index that would follow is never fed.
        self.feed = self.header
        return True

    def _more(self):
        while self.left == 0:
            if not self._next_block():
                return b''
        if self.dec.needs_input:
            if not self.feed:
                n = min(CHUNK, self.cleft)
                if n == 0:
                    raise ValueError(f'xz block {self.block} ends early')
                self.feed = self.f.read(n)
                self.cleft -= len(self.feed)
            out = self.dec.decompress(self.feed, self.step)
            self.feed = b''
        else:
            out = self.dec.decompress(b'', self.step)
        self.left -= len(out)
        DECOMPRESSED[0] += len(out)
        if self.left == 0 and self.cleft:
            # The block's padding and check: liblzma verifies its CRC64.
            self.dec.decompress(self.feed + self.f.read(self.cleft))
            self.cleft, self.feed = 0, b''
        return out

    def readable(self):
        return True

    def readinto(self, buf):
        while not self.pending:
            out = self._more()
            if not out and self.left == 0 and self.block >= len(self.blocks):
                return 0
            if self.skip:
                cut = min(self.skip, len(out))
                out, self.skip = out[cut:], self.skip - cut
            self.pending = out
        n = min(len(buf), len(self.pending))
        buf[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        self.consumed += n
        return n


def is_header(record):
    if record[257:262] != b'ustar':
        return False
    try:
        tarfile.TarInfo.frombuf(record, 'utf-8', 'surrogateescape')
    except tarfile.TarError:
        return False
    return True


def key(name):
    # GNU tar --sort=name orders each directory's entries by name, so the
    # archive follows the names' components, not the whole strings.
    return [c.encode('utf-8', 'surrogateescape') for c in name.rstrip('/').split('/')]


def first_member(f, header, blocks, i):
    """(name, offset) of the first member whose header lies in the first
    PROBE bytes of block i, or None."""
    probe = Blocks(f, header, blocks, i, step=16 << 10)
    head = bytearray()
    while len(head) < min(PROBE, blocks[i][2]):
        chunk = probe.read(PROBE - len(head))
        if not chunk:
            break
        head += chunk
    for off in range(0, len(head) - 511, 512):
        record = bytes(head[off:off + 512])
        # A name field with no NUL is the cut-off name of a long one: GNU
        # tar put the whole name in a ././@LongLink entry just before,
        # which may lie in the previous block. Read from here, the member
        # would come out under its cut name and never match: the next
        # header of the block names it instead.
        if b'\0' not in record[:100]:
            continue
        if is_header(record):
            try:
                with tarfile.open(fileobj=Blocks(f, header, blocks, i, off), mode='r|') as t:
                    m = t.next()
            except (tarfile.TarError, EOFError, ValueError):
                continue
            if m is not None:
                return m.name, off
    return None


def start_of(probe, count, want):
    """(block, offset) of the last block whose first member comes at or
    before key `want`, by bisection over the blocks (probe(i) is
    first_member's answer for block i, None for a block that begins deep
    inside one large file)."""
    at, lo, hi = (0, 0), 0, count
    while lo < hi:
        mid = (lo + hi) // 2
        j = mid
        while j >= lo and probe(j) is None:
            j -= 1
        if j < lo:
            lo = mid + 1
        elif key(probe(j)[0]) <= want:
            at, lo = (j, probe(j)[1]), mid + 1
        else:
            hi = j
    return at


def extract(f, header, blocks, probe, names, dest):
    """Extracts `names` in archive order, reading on from one to the next
    unless a later block starts closer to it. Returns the names not found."""
    missing, reader, members = [], None, None
    for name in sorted(set(names), key=key):
        want = key(name)
        i, off = start_of(probe, len(blocks), want)
        if reader is None or reader.block < i:
            reader = Blocks(f, header, blocks, i, off)
            members = tarfile.open(fileobj=reader, mode='r|')
        found = False
        for m in members:
            if m.name == name and m.isreg():
                path = os.path.join(dest, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with members.extractfile(m) as src, open(path, 'wb') as out:
                    out.write(src.read())
                found = True
                break
            if key(m.name) > want:
                # Past it: the next name may still be ahead, but this
                # member is consumed; start that one afresh.
                reader = None
                break
        if not found:
            missing.append(name)
    return missing


def main():
    if len(sys.argv) < 4:
        sys.exit('usage: tar-members.py TARBALL DESTDIR MEMBER...')
    tarball, dest, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(tarball, 'rb') as f:
        try:
            header, blocks = xz_blocks(f)
            firsts = {}

            def probe(i):
                if i not in firsts:
                    firsts[i] = first_member(f, header, blocks, i)
                return firsts[i]
            missing = extract(f, header, blocks, probe, names, dest)
        except (OSError, ValueError, lzma.LZMAError, tarfile.TarError, EOFError) as e:
            sys.exit(f'tar-members.py: {tarball}: {e}')
    if missing:
        sys.exit(f'tar-members.py: not found where the order puts them: {" ".join(missing)}')
    total = sum(b[2] for b in blocks)
    print(f'tar-members.py: {len(names)} members from {tarball}, '
          f'{DECOMPRESSED[0] >> 20} of {total >> 20} MiB decompressed')


if __name__ == '__main__':
    main()
