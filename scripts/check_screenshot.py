#!/usr/bin/env python3
"""Check that a viewer screenshot shows a scene, not an empty or broken frame.

usage: check_screenshot.py FILE.png COLOURS [--min-share S]

COLOURS is the comma-separated list of object colours the viewer printed
("#e6553c,#3c8ce6"; `hyphys view --screenshot` prints them). The image
passes when
  1. it is not one colour: at least 64 distinct colours, and the most common
     colour covers under 95% of the pixels (an empty clear or a failed draw
     is one colour; a lit scene has gradients);
  2. object pixels cover at least S of the image (default 0.02 = 2%). An
     object pixel is saturated (max - min channel >= 40 of 255) with a hue
     within 20 degrees of one of the object colours. Background, grid and HUD
     are grey or pale (chroma < 30), so they never count; shading scales a
     colour and the specular highlight adds white, and neither moves the hue.
  3. at least one object colour is present in >= 0.1% of the pixels.
The thresholds leave room: the benchmark scenes, framed by the viewer, cover
5-40% of a 1280x720 frame with object colours.

Plain Python (zlib + struct) so the test needs no imaging package.
Exit 0 pass, 1 fail, 2 bad usage or unreadable PNG.
"""
import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, w = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("only 8-bit RGB/RGBA non-interlaced PNGs are read")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if w is None:
        raise ValueError("no IHDR chunk")
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    out = bytearray(h * stride)
    prev = bytearray(stride)
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ftype == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        elif ftype != 0:
            raise ValueError("bad PNG filter %d" % ftype)
        out[y * stride:(y + 1) * stride] = line
        prev = line
    return w, h, bpp, out


def hue(r, g, b):
    mx, mn = max(r, g, b), min(r, g, b)
    if mx == mn:
        return 0.0
    d = float(mx - mn)
    if mx == r:
        hh = ((g - b) / d) % 6.0
    elif mx == g:
        hh = (b - r) / d + 2.0
    else:
        hh = (r - g) / d + 4.0
    return 60.0 * hh


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, colours = argv[1], argv[2]
    min_share = 0.02
    if len(argv) >= 5 and argv[3] == "--min-share":
        min_share = float(argv[4])
    try:
        hues = []
        for c in colours.split(","):
            c = c.strip().lstrip("#")
            hues.append(hue(int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)))
        w, h, bpp, px = read_png(path)
    except (OSError, ValueError, IndexError) as e:
        print("check_screenshot: %s: %s" % (path, e), file=sys.stderr)
        return 2

    counts = {}
    per_colour = [0] * len(hues)
    hue_cache = {}
    n = w * h
    for i in range(0, n * bpp, bpp):
        rgb = bytes(px[i:i + 3])
        counts[rgb] = counts.get(rgb, 0) + 1
    # classify each distinct colour once, weighted by its count
    for rgb, k in counts.items():
        r, g, b = rgb
        if max(r, g, b) - min(r, g, b) < 40:
            continue
        hh = hue_cache.get(rgb)
        if hh is None:
            hh = hue(r, g, b)
        for j, ref in enumerate(hues):
            dist = abs(hh - ref) % 360.0
            if min(dist, 360.0 - dist) <= 20.0:
                per_colour[j] += k
                break
    distinct = len(counts)
    top = max(counts.values()) / n
    share = sum(per_colour) / n
    shares = ", ".join("#%s %.2f%%" % (c.strip().lstrip("#"), 100.0 * k / n)
                       for c, k in zip(colours.split(","), per_colour))
    print("check_screenshot: %s %dx%d: %d colours, most common %.1f%%, object pixels %.2f%% (%s)"
          % (path, w, h, distinct, 100 * top, 100 * share, shares))
    ok = True
    if distinct < 64 or top >= 0.95:
        print("check_screenshot: FAIL: the image is (nearly) one colour", file=sys.stderr)
        ok = False
    if share < min_share:
        print("check_screenshot: FAIL: object colours cover %.2f%% < %.2f%%" % (100 * share, 100 * min_share),
              file=sys.stderr)
        ok = False
    if max(per_colour) < 0.001 * n:
        print("check_screenshot: FAIL: no object colour reaches 0.1%", file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
