"""Streamed decompression under a size limit (tracescore.server._body)."""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import AsyncIterator

import pytest

from tracescore.server._body import BodyError, read_body


async def _chunks(data: bytes, size: int = 1000) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


PAYLOAD = os.urandom(5000) + b"a" * 20000


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        (None, lambda d: d),
        ("identity", lambda d: d),
        ("gzip", gzip.compress),
        ("GZIP", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda d: zlib.compress(d, wbits=-zlib.MAX_WBITS)),
    ],
)
async def test_decodes(encoding: str | None, compress: object) -> None:
    body = compress(PAYLOAD)  # type: ignore[operator]
    assert await read_body(_chunks(body), content_encoding=encoding, limit=10**6) == PAYLOAD


async def test_gzip_members_are_joined() -> None:
    body = gzip.compress(b"first ") + gzip.compress(b"second")
    assert await read_body(_chunks(body, 7), content_encoding="gzip", limit=100) == b"first second"


async def test_gzip_bomb_is_stopped_at_the_limit() -> None:
    bomb = gzip.compress(bytes(50 * 1024 * 1024), compresslevel=9)  # 50 MiB of zeros, ~50 KiB
    with pytest.raises(BodyError) as caught:
        await read_body(_chunks(bomb, 64 * 1024), content_encoding="gzip", limit=1024 * 1024)
    assert caught.value.status == 413


async def test_plain_body_over_the_limit() -> None:
    with pytest.raises(BodyError) as caught:
        await read_body(_chunks(b"x" * 2001), content_encoding=None, limit=2000)
    assert caught.value.status == 413


async def test_corrupt_and_truncated_gzip() -> None:
    body = gzip.compress(PAYLOAD)
    with pytest.raises(BodyError, match="ends early") as caught:
        await read_body(_chunks(body[: len(body) // 2]), content_encoding="gzip", limit=10**6)
    assert caught.value.status == 400
    with pytest.raises(BodyError, match="not valid gzip"):
        await read_body(_chunks(b"not gzip at all"), content_encoding="gzip", limit=10**6)


async def test_unsupported_encoding() -> None:
    with pytest.raises(BodyError, match="not supported") as caught:
        await read_body(_chunks(b"x"), content_encoding="br", limit=10)
    assert caught.value.status == 415
