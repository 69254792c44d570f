"""Decoding large bodies in a worker process gives the same rows as decoding inline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ingest.otlp_payloads import traces_request
from tracescore.ingest import DecodedSpans, DecodeError, DecodePool, SpanBatch, decode_request
from tracescore.store import arrow_span_table


@pytest.fixture(scope="module")
def pool() -> Iterator[DecodePool]:
    """A pool with one worker that takes every body of 1 KiB or more."""
    decode_pool = DecodePool(1, min_bytes=1024)
    decode_pool.start()
    yield decode_pool
    decode_pool.close()


async def _assert_decodes_like_inline(decode_pool: DecodePool) -> None:
    request = traces_request(40, resource_project="from-resource", attribute_size=200)
    request.resource_spans[0].scope_spans[0].spans[3].span_id = b"\x01\x02"  # rejected
    body = request.SerializeToString()
    decoded = await decode_pool.decode_traces(body, encoding="protobuf", project=None)
    assert isinstance(decoded, DecodedSpans)
    inline = decode_request(body, encoding="protobuf", kind="traces")
    assert decoded.arrow_table.equals(arrow_span_table(inline))
    assert (len(decoded), decoded.rejected) == (39, 1)
    assert decoded.error_message == inline.error_message
    assert decoded.project_counts() == {"from-resource": 39}


async def test_worker_decodes_large_bodies(pool: DecodePool) -> None:
    await _assert_decodes_like_inline(pool)


async def test_small_bodies_stay_inline(pool: DecodePool) -> None:
    decoded = await pool.decode_traces(traces_request(1).SerializeToString(),
                                       encoding="protobuf", project="p")
    assert isinstance(decoded, SpanBatch)


async def test_worker_errors_come_back_as_decode_errors(pool: DecodePool) -> None:
    body = traces_request(40, attribute_size=200).SerializeToString()
    with pytest.raises(DecodeError, match="not a valid OTLP/protobuf"):
        await pool.decode_traces(body[:-5], encoding="protobuf", project=None)


async def test_without_workers_a_large_body_is_decoded_to_arrow_in_a_thread() -> None:
    threadless = DecodePool(0, min_bytes=1024)
    await _assert_decodes_like_inline(threadless)
    body = traces_request(40, attribute_size=200).SerializeToString()
    with pytest.raises(DecodeError, match="not a valid OTLP/protobuf"):
        await threadless.decode_traces(body[:-5], encoding="protobuf", project=None)
