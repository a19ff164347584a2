"""A real browser draws the lab report: headless Chromium takes a screenshot and it is not blank.

Needs the Debian package `chromium` (CI installs it); skips with that reason when it is missing.
The PNG is decoded with the standard library (zlib), so the check needs no imaging package.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
import zlib
from collections import Counter
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.render import write_tree
from clusterforge.render.report import render_report

ROOT = Path(__file__).parents[2]
WIDTH, HEIGHT = 1400, 2000
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars")


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def decode_png(data: bytes) -> tuple[int, int, list[bytes], int]:
    """(width, height, rows, bytes per pixel) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unsupported PNG {header}"
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((x + up) & 0xFF for x, up in zip(line, prev, strict=True))
        elif kind == 3:
            for i in range(stride):
                line[i] = (line[i] + (((line[i - bpp] if i >= bpp else 0) + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left, corner = (line[i - bpp], prev[i - bpp]) if i >= bpp else (0, 0)
                line[i] = (line[i] + _paeth(left, prev[i], corner)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def test_png_decoder_reads_a_tiny_image():
    pixels = [b"\x00\xff\x00\x00\x00\x00\xff", b"\x02\x00\x00\xff\x00\xff\x00"]  # filter None, then Up

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(b"".join(pixels))) + chunk(b"IEND", b""))
    width, height, rows, bpp = decode_png(png)
    assert (width, height, bpp) == (2, 2, 3)
    assert rows == [b"\xff\x00\x00\x00\x00\xff", b"\xff\x00\xff\x00\xff\xff"]


@pytest.fixture(scope="module")
def screenshot(tmp_path_factory) -> Path:
    browser = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)
    if browser is None:
        pytest.skip("no headless browser: install the Debian package `chromium`")
    out = tmp_path_factory.mktemp("report")
    spec, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    write_tree(out, render_report(plan))
    png = out / "lab.png"
    with tempfile.TemporaryDirectory(prefix="cf-chromium-") as profile:
        subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}",
                        f"--window-size={WIDTH},{HEIGHT}", (out / "report" / "index.html").as_uri()],
                       check=True, capture_output=True, timeout=180)
    return png


@pytest.fixture(scope="module")
def pixels(screenshot: Path) -> tuple[int, int, Counter]:
    width, height, rows, bpp = decode_png(screenshot.read_bytes())
    colours = Counter()
    for row in rows:
        colours.update(row[i:i + 3] for i in range(0, len(row), bpp))
    return width, height, colours


def test_screenshot_has_the_window_size(pixels):
    assert pixels[:2] == (WIDTH, HEIGHT)


def test_screenshot_is_not_one_colour(pixels):
    _, _, colours = pixels
    background_share = colours.most_common(1)[0][1] / sum(colours.values())
    assert background_share < 0.8


def test_screenshot_has_many_distinct_colours(pixels):
    assert len(pixels[2]) >= 50


def test_screenshot_shows_the_dark_header_and_the_status_green(pixels):
    colours = pixels[2]
    dark = sum(n for rgb, n in colours.items() if max(rgb) < 130 and rgb[2] > rgb[0])
    green = sum(n for rgb, n in colours.items() if rgb[1] > rgb[0] + 60 and rgb[1] > rgb[2] + 30)
    assert dark > WIDTH * 150  # the dark blue header band
    assert green > 100  # ok pills and power bars
