"""Read a request body as a stream, decompressing gzip/deflate, under a size limit.

The limit counts decompressed bytes while they are produced (``max_length`` on the
decompressor), so a small gzip bomb is stopped after ``limit`` bytes, never inflated whole.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator


class BodyError(Exception):
    """The body cannot be read; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _decompressor(encoding: str, first: bytes) -> zlib._Decompress:
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    # "deflate" is meant to be zlib-wrapped (RFC 9110); some clients send raw deflate.
    if len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0:
        return zlib.decompressobj(zlib.MAX_WBITS)
    return zlib.decompressobj(-zlib.MAX_WBITS)


SUPPORTED_ENCODINGS = ("identity", "gzip", "x-gzip", "deflate")


async def read_body(
    chunks: AsyncIterator[bytes], *, content_encoding: str | None, limit: int
) -> bytes:
    """The whole (decompressed) body; raises ``BodyError`` (413 over ``limit``, 400 corrupt)."""
    encoding = (content_encoding or "identity").strip().lower() or "identity"
    if encoding not in SUPPORTED_ENCODINGS:
        raise BodyError(
            415, f"content encoding {encoding!r} is not supported; send gzip, deflate or none"
        )
    too_large = BodyError(
        413, f"the body is larger than {limit} bytes (decompressed); send smaller batches"
    )
    out = bytearray()
    received = 0
    decompressor: zlib._Decompress | None = None
    async for chunk in chunks:
        if not chunk:
            continue
        received += len(chunk)
        if received > limit:
            raise too_large
        if encoding == "identity":
            out += chunk
            continue
        if decompressor is None:
            decompressor = _decompressor(encoding, chunk)
        data = chunk
        try:
            while data:
                out += decompressor.decompress(data, limit - len(out) + 1)
                if len(out) > limit:
                    raise too_large
                data = decompressor.unconsumed_tail
                if decompressor.eof and decompressor.unused_data:
                    # a gzip stream may hold several members
                    data = decompressor.unused_data
                    decompressor = _decompressor(encoding, data)
        except zlib.error as exc:
            raise BodyError(400, f"the body is not valid {encoding} data ({exc})") from None
    if decompressor is not None:
        if not decompressor.eof:
            raise BodyError(400, f"the {encoding} body ends early (truncated)")
    return bytes(out)


__all__ = ["SUPPORTED_ENCODINGS", "BodyError", "read_body"]
