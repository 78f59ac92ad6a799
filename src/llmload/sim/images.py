"""What an image costs the simulated model: tokens by size, as a vision encoder's patches.

Qwen2-VL and its kin cut an image into 14x14-pixel patches and merge each 2x2 of them into one
token, so an image of W x H pixels is about ``ceil(W / 28) * ceil(H / 28)`` tokens: 512x512 is
361 tokens and 1024x768 is 1,036. The simulator charges exactly that, as prompt tokens the
prefill pays for, so TTFT grows with the image as in a real engine. The tokens are a hash of
the image's bytes and their place in it, so the same image sent twice is a shared prefix (a
real engine's prefix cache keys images by their hash the same way).

Only ``data:`` URLs are read (the simulator fetches nothing), and only PNG and JPEG sizes are
known; any other image is a 400 naming the part.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
import zlib

PATCH = 28  # pixels per token side: 14-pixel patches merged 2x2
_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


class ImageError(ValueError):
    pass


def image_tokens(width: int, height: int) -> int:
    return math.ceil(width / PATCH) * math.ceil(height / PATCH)


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def decode(url: str) -> tuple[bytes, tuple[int, int]]:
    """The image's bytes and (width, height) from a ``data:image/...;base64,`` URL."""
    head, sep, payload = url.partition(",")
    if not sep or not head.startswith("data:image/") or not head.endswith(";base64"):
        raise ImageError("image_url must be a data:image/...;base64 URL (the simulator fetches nothing)")
    try:
        data = base64.b64decode(payload, validate=True)
    except binascii.Error:
        raise ImageError("image_url's base64 does not decode") from None
    size = _png_size(data) or _jpeg_size(data)
    if size is None:
        raise ImageError("image_url must hold a PNG or JPEG image")
    return data, size


def tokens_of(url: str) -> list[str]:
    """The prompt tokens of one image."""
    data, (width, height) = decode(url)
    digest = format(zlib.crc32(data), "08x")
    return [f"<img:{digest}:{i}>" for i in range(image_tokens(width, height))]
