#!/usr/bin/env python3
"""Draws the extension's icon (media/icon.png, 128x128): a dark rounded square with a
nested progress tree, three bars at three depths, the deepest one partly done.
Pure Python (zlib + struct), so the picture is made here, not downloaded.
  python3 scripts/make_icon.py media/icon.png"""
import struct
import sys
import zlib

SIZE = 128
BACKGROUND = (30, 36, 44)
GREEN = (118, 185, 0)      # done
TRACK = (70, 80, 92)       # not yet
WHITE = (235, 240, 245)

# (x, y, width, height, fraction done): the top-level phase, a child, a grandchild.
BARS = [(18, 26, 92, 16, 1.0), (34, 56, 76, 16, 0.75), (50, 86, 60, 16, 0.4)]


def inside_rounded(x, y, radius=22):
    cx = min(max(x, radius), SIZE - 1 - radius)
    cy = min(max(y, radius), SIZE - 1 - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2


def pixel(x, y):
    if not inside_rounded(x, y):
        return (0, 0, 0, 0)
    for bx, by, w, h, done in BARS:
        if bx <= x < bx + w and by <= y < by + h:
            return (*(GREEN if x < bx + w * done else TRACK), 255)
        # the tree's connector: down from the parent's left edge, then right to the child
        if bx - 10 <= x < bx - 6 and by - 14 <= y < by + h // 2 + 2 and by > BARS[0][1]:
            return (*WHITE, 255)
        if bx - 10 <= x < bx - 2 and by + h // 2 - 2 <= y < by + h // 2 + 2 and by > BARS[0][1]:
            return (*WHITE, 255)
    return (*BACKGROUND, 255)


def png(width, height, rows):
    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
    raw = b''.join(b'\x00' + bytes(v for px in row for v in px) for row in rows)
    header = struct.pack('>IIBBBBB', width, height, 8, 6, 0, 0, 0)
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')


if __name__ == '__main__':
    rows = [[pixel(x, y) for x in range(SIZE)] for y in range(SIZE)]
    with open(sys.argv[1], 'wb') as f:
        f.write(png(SIZE, SIZE, rows))
