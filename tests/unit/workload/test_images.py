"""Images for multimodal requests: the pool, the parts, the sizes the simulator reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmload.errors import ConfigError
from llmload.sim.images import decode, image_tokens, tokens_of
from llmload.workload.images import POOL, ImagePool, ImagePrompts, ImageSpec, parse_sizes, with_images
from llmload.workload.prompts import SyntheticPrompts


def test_sizes_parse_and_bad_ones_name_the_option() -> None:
    assert parse_sizes("512x512, 1024X768") == ((512, 512), (1024, 768))
    for bad in ("512", "512x", "ax3", "512x512;64x64"):
        with pytest.raises(ConfigError, match="--image-sizes"):
            parse_sizes(bad)
    with pytest.raises(ConfigError, match="--image-sizes"):
        ImageSpec(1, ((8, 8),))
    with pytest.raises(ConfigError, match="--image-format"):
        ImageSpec(1, ((64, 64),), "gif")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="--images"):
        ImageSpec(-1)


@pytest.mark.parametrize("fmt", ["png", "jpeg"])
def test_the_pool_draws_each_size_and_the_simulator_reads_it_back(fmt: str) -> None:
    pool = ImagePool(ImageSpec(3, ((64, 48), (100, 300)), fmt), seed=1, salt="run")  # type: ignore[arg-type]
    seen = set()
    for request in range(20):
        images = pool.pick(0, request)
        assert len(images) == 3
        for image in images:
            data, size = decode(image.url)
            assert size == image.size and len(data) == image.nbytes
            seen.add(image.url)
    assert len(seen) == 2 * POOL  # every image of both sizes' pools was used
    assert pool.pick(5, 7) == pool.pick(5, 7)  # deterministic per (user, request)
    other = ImagePool(ImageSpec(1, ((64, 48),), fmt), seed=1, salt="next run")  # type: ignore[arg-type]
    assert other.pick(0, 0)[0].url not in seen  # another run's salt draws other pictures


def test_image_tokens_are_the_patches_and_the_same_image_the_same_tokens() -> None:
    assert image_tokens(512, 512) == 361 and image_tokens(1024, 768) == 37 * 28
    pool = ImagePool(ImageSpec(1, ((56, 30),), "png"), seed=0, salt="")
    url = pool.pick(0, 0)[0].url
    assert len(tokens_of(url)) == 2 * 2
    assert tokens_of(url) == tokens_of(url)


def test_images_go_after_the_last_user_messages_text() -> None:
    pool = ImagePool(ImageSpec(2, ((32, 32),), "jpeg"), seed=0, salt="")
    source = ImagePrompts(SyntheticPrompts(16, 8, seed=0), pool)
    prompt = source.get(0, 0)
    (message,) = prompt.messages
    text, *parts = message["content"]
    assert text["type"] == "text" and len(text["text"].split()) == 16
    assert [p["type"] for p in parts] == ["image_url", "image_url"]
    assert prompt.images == 2 and prompt.image_bytes == sum(i.nbytes for i in pool.pick(0, 0))
    history = (
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    )
    out = with_images(history, pool.pick(0, 0))
    assert out[0]["content"] == "a" and isinstance(out[2]["content"], list)


def test_a_directory_of_files_is_sent_as_it_is(tmp_path: Path) -> None:
    pool = ImagePool(ImageSpec(1, ((40, 20),), "png"), seed=0, salt="")
    data, _ = decode(pool.pick(0, 0)[0].url)
    (tmp_path / "a.png").write_bytes(data)
    (tmp_path / "notes.txt").write_text("not an image")
    files = ImagePool(ImageSpec(1, directory=str(tmp_path)))
    (image,) = files.pick(3, 4)
    assert decode(image.url) == (data, (40, 20)) and image.url.startswith("data:image/png;base64,")
    with pytest.raises(ConfigError, match="holds no"):
        ImagePool(
            ImageSpec(1, directory=str(tmp_path / "empty" if (tmp_path / "empty").mkdir() is None else ""))
        )
