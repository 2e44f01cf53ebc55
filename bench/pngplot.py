"""A dependency-free PNG line plot (for machines without matplotlib): axes, grid, numeric tick
labels in a 3x5 pixel font, one coloured polyline with markers per series. The legend is the
list of (label, colour) printed by the caller next to the image."""
import struct
import zlib

_DIGITS = {  # 3x5 glyphs, rows top to bottom, bit 2 = left column
    "0": [7, 5, 5, 5, 7], "1": [2, 6, 2, 2, 7], "2": [7, 1, 7, 4, 7], "3": [7, 1, 7, 1, 7],
    "4": [5, 5, 7, 1, 1], "5": [7, 4, 7, 1, 7], "6": [7, 4, 7, 5, 7], "7": [7, 1, 1, 1, 1],
    "8": [7, 5, 7, 5, 7], "9": [7, 5, 7, 1, 7], ".": [0, 0, 0, 0, 2], "k": [4, 5, 6, 5, 5],
}
COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75)]


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray([255] * (w * h * 3))

    def dot(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = (y * self.w + x) * 3
            self.px[i:i + 3] = bytes(c)

    def line(self, x0, y0, x1, y1, c, width=1):
        n = max(abs(x1 - x0), abs(y1 - y0), 1)
        for k in range(n + 1):
            x = round(x0 + (x1 - x0) * k / n)
            y = round(y0 + (y1 - y0) * k / n)
            for dx in range(-(width // 2), width // 2 + 1):
                for dy in range(-(width // 2), width // 2 + 1):
                    self.dot(x + dx, y + dy, c)

    def text(self, x, y, s, c=(0, 0, 0), scale=2):
        for ch in s:
            rows = _DIGITS.get(ch)
            if rows:
                for r, bits in enumerate(rows):
                    for col in range(3):
                        if bits & (4 >> col):
                            for a in range(scale):
                                for b in range(scale):
                                    self.dot(x + col * scale + a, y + r * scale + b, c)
            x += 4 * scale

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3])
                       for y in range(self.h))

        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data +
                    struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h,
                                                                         8, 2, 0, 0, 0)) +
                    chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def plot(path, series, xs_log2=True, ymax=None, w=900, h=520):
    """series: list of (label, [(x, y), ...]); x > 0 on a log2 axis; y from 0."""
    import math
    pts = [p for _, s in series for p in s if p[1] is not None]
    if not pts:
        return []
    lx = [math.log2(p[0]) for p in pts]
    x0, x1 = min(lx), max(lx)
    x1 = x1 if x1 > x0 else x0 + 1
    y1 = ymax or max(p[1] for p in pts) * 1.1
    left, right, top, bottom = 70, w - 20, 20, h - 50
    cv = Canvas(w, h)
    X = lambda x: round(left + (math.log2(x) - x0) / (x1 - x0) * (right - left))
    Y = lambda y: round(bottom - y / y1 * (bottom - top))
    step = 0.5 if y1 <= 4 else 1.0
    y = 0.0
    while y <= y1 + 1e-9:
        cv.line(left, Y(y), right, Y(y), (225, 225, 225))
        cv.text(8, Y(y) - 5, "%.1f" % y)
        y += step
    for e in range(int(math.floor(x0)), int(math.ceil(x1)) + 1):
        xv = 2 ** e
        cv.line(X(xv), top, X(xv), bottom, (225, 225, 225))
        label = "%dk" % (xv // 1024) if xv >= 1024 else str(xv)
        cv.text(X(xv) - 4 * len(label), bottom + 12, label)
    cv.line(left, bottom, right, bottom, (0, 0, 0))
    cv.line(left, top, left, bottom, (0, 0, 0))
    legend = []
    for i, (label, s) in enumerate(series):
        c = COLOURS[i % len(COLOURS)]
        good = sorted(p for p in s if p[1] is not None)
        for a, b in zip(good, good[1:]):
            cv.line(X(a[0]), Y(a[1]), X(b[0]), Y(b[1]), c, 3 if label.startswith("ck") else 1)
        for p in good:
            for d in range(-3, 4):
                cv.dot(X(p[0]) + d, Y(p[1]), c)
                cv.dot(X(p[0]), Y(p[1]) + d, c)
        legend.append((label, "#%02x%02x%02x" % c))
    cv.png(path)
    return legend
