"""Pick the decoder for a request from its content type and signal, and the row-dict helper."""

from __future__ import annotations

from typing import Any, Literal

from ._batch import LogBatch, SpanBatch
from ._errors import UnsupportedContentType
from ._json import decode_logs_json, decode_traces_json
from ._limits import MAX_ATTRIBUTE_BYTES
from ._protobuf import decode_logs_protobuf, decode_traces_protobuf

Signal = Literal["traces", "logs"]
Encoding = Literal["protobuf", "json"]

PROTOBUF_TYPES = frozenset({"application/x-protobuf", "application/protobuf"})
JSON_TYPES = frozenset({"application/json"})


def encoding_of(content_type: str | None) -> Encoding:
    """``protobuf`` or ``json`` for a Content-Type header; raise ``UnsupportedContentType``."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in PROTOBUF_TYPES:
        return "protobuf"
    if media in JSON_TYPES:
        return "json"
    raise UnsupportedContentType(
        f"content type {content_type or '(none)'!r} is not supported; send "
        "application/x-protobuf or application/json"
    )


def decode_request(
    body: bytes,
    *,
    encoding: Encoding,
    kind: Signal,
    project: str | None = None,
    max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES,
) -> SpanBatch | LogBatch:
    """Decode one (already decompressed) OTLP export body into a span or log batch."""
    cap = max_attribute_bytes
    if kind == "traces":
        if encoding == "protobuf":
            return decode_traces_protobuf(body, project=project, max_attribute_bytes=cap)
        return decode_traces_json(body, project=project, max_attribute_bytes=cap)
    if encoding == "protobuf":
        return decode_logs_protobuf(body, project=project, max_attribute_bytes=cap)
    return decode_logs_json(body, project=project, max_attribute_bytes=cap)


def span_dicts_from_otlp(
    body: bytes,
    *,
    content_type: str = "application/x-protobuf",
    kind: Signal = "traces",
    project: str | None = None,
) -> list[dict[str, Any]]:
    """Decode an OTLP body and return span row dicts (or log row dicts for ``kind="logs"``).

    A convenience for tests and tools: rejected spans are left out silently; call
    ``decode_request`` to see them.
    """
    batch = decode_request(body, encoding=encoding_of(content_type), kind=kind, project=project)
    return batch.to_dicts()


__all__ = ["decode_request", "encoding_of", "span_dicts_from_otlp"]
