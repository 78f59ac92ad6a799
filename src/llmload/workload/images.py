"""Images for multimodal chat requests: synthetic ones drawn here, or files from a directory.

An image goes into the last user message as an OpenAI ``image_url`` part holding a data URL,
which every OpenAI-compatible multimodal server (vLLM, SGLang, llama.cpp) accepts without
fetching anything. Each request gets ``count`` images, its sizes drawn from ``--image-sizes``
by the request's (user, request) seed.

Encoding a 1024x768 PNG costs about 140 ms of CPU and a JPEG about 5 ms: far too long for a
worker's event loop in the middle of a run, where it would delay every other stream's reads.
So the images are drawn and encoded once, when the prompt source is built: a pool of
``POOL`` images per size, salted by the run's salt (a server's image cache cannot carry one
run's images into the next), and requests take them in turn. Within a run an image repeats
every ``POOL`` requests of its size, which a server with a multimodal cache may serve from it.

The picture is a colour gradient under seeded noise: it compresses like a photograph (a
1024x768 JPEG at quality 85 is about 230 kB), not like a flat colour (a few hundred bytes).
"""

from __future__ import annotations

import base64
import io
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from llmload.errors import ConfigError
from llmload.workload.prompts import Prompt, PromptSource

POOL = 4
ImageFormat = Literal["png", "jpeg"]
_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


@dataclass(frozen=True, slots=True)
class ImageSpec:
    """``--images N --image-sizes WxH,... --image-format png|jpeg [--image-dir DIR]``."""

    count: int = 0  # images per request; 0: none
    sizes: tuple[tuple[int, int], ...] = ((512, 512),)
    format: ImageFormat = "jpeg"
    directory: str | None = None  # files from here instead of synthetic images

    def __post_init__(self) -> None:
        if isinstance(self.count, bool) or not isinstance(self.count, int) or not 0 <= self.count <= 64:
            raise ConfigError("--images", self.count, "must be a whole number of images per request, 0 to 64")
        if self.format not in ("png", "jpeg"):
            raise ConfigError("--image-format", self.format, "must be png or jpeg")
        for w, h in self.sizes:
            if not (16 <= w <= 8192 and 16 <= h <= 8192):
                raise ConfigError("--image-sizes", f"{w}x{h}", "each side must be 16 to 8192 pixels")
        if self.directory is not None and not Path(self.directory).is_dir():
            raise ConfigError("--image-dir", self.directory, "no such directory")


def parse_sizes(text: str) -> tuple[tuple[int, int], ...]:
    """``512x512,1024x768`` -> ((512, 512), (1024, 768))."""
    sizes = []
    for part in text.split(","):
        w, sep, h = part.strip().lower().partition("x")
        if not sep or not w.isdigit() or not h.isdigit():
            raise ConfigError(
                "--image-sizes", text, "expected WIDTHxHEIGHT[,WIDTHxHEIGHT...], e.g. 512x512,1024x768"
            )
        sizes.append((int(w), int(h)))
    return tuple(sizes)


@dataclass(frozen=True, slots=True)
class Image:
    url: str  # the data URL sent
    nbytes: int  # the encoded file's bytes (the data URL's base64 is 4/3 of it)
    size: tuple[int, int] | None  # width and height; None for a file whose size is not read


def _draw(size: tuple[int, int], fmt: ImageFormat, seed: int) -> bytes:
    import numpy as np
    from PIL import Image as PilImage

    w, h = size
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // w, y * 255 // h, (x + y) * 255 // (w + h)], axis=-1).astype(np.int16)
    noise = np.random.default_rng(seed).integers(-24, 25, size=(h, w, 3))
    picture = PilImage.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8))
    out = io.BytesIO()
    picture.save(out, format=fmt.upper(), **({"quality": 85} if fmt == "jpeg" else {}))
    return out.getvalue()


def _url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


@dataclass(slots=True)
class ImagePool:
    """The images requests draw from, built once per process."""

    spec: ImageSpec
    seed: int = 0
    salt: str = ""
    _pools: list[list[Image]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.spec.directory is not None:
            self._pools = [self._files(Path(self.spec.directory))]
            return
        mime = f"image/{self.spec.format}"
        for size in self.spec.sizes:
            pool = []
            for k in range(POOL):
                seed = zlib.crc32(f"{self.salt}/{self.seed}/{size}/{k}".encode())
                data = _draw(size, self.spec.format, seed)
                pool.append(Image(_url(data, mime), len(data), size))
            self._pools.append(pool)

    @staticmethod
    def _files(directory: Path) -> list[Image]:
        files = sorted(p for p in directory.iterdir() if p.suffix.lower() in _MIME and p.is_file())
        if not files:
            raise ConfigError("--image-dir", str(directory), f"holds no {', '.join(_MIME)} file")
        return [Image(_url(p.read_bytes(), _MIME[p.suffix.lower()]), p.stat().st_size, None) for p in files]

    def pick(self, user_index: int, request_index: int) -> list[Image]:
        """This request's images: a size per image by the request's seed, then the next one of
        that size's pool."""
        out = []
        for i in range(self.spec.count):
            draw = zlib.crc32(f"{self.seed}/{user_index}/{request_index}/{i}".encode())
            pool = self._pools[draw % len(self._pools)]
            out.append(pool[(request_index * self.spec.count + i + user_index) % len(pool)])
        return out


def with_images(
    messages: Sequence[Mapping[str, object]], images: Sequence[Image]
) -> tuple[Mapping[str, object], ...]:
    """The messages with the images after the last user message's text, as content parts."""
    out = [dict(m) for m in messages]
    last = max((i for i, m in enumerate(out) if m.get("role") == "user"), default=len(out) - 1)
    text = out[last].get("content")
    parts: list[object] = (
        [{"type": "text", "text": text}]
        if isinstance(text, str)
        else list(text)
        if isinstance(text, list)
        else []
    )
    parts += [{"type": "image_url", "image_url": {"url": image.url}} for image in images]
    out[last]["content"] = parts
    return tuple(out)


class ImagePrompts:
    """A prompt source whose chat prompts carry images (``--images``)."""

    def __init__(self, inner: PromptSource, pool: ImagePool) -> None:
        self._inner = inner
        self._pool = pool

    def get(self, user_index: int, request_index: int) -> Prompt:
        prompt = self._inner.get(user_index, request_index)
        images = self._pool.pick(user_index, request_index)
        return replace(
            prompt,
            messages=with_images(prompt.messages, images),
            images=len(images),
            image_bytes=sum(i.nbytes for i in images),
        )
