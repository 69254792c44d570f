"""OTLP ingest: decode OTLP/protobuf and OTLP/JSON export requests into columnar span and log rows.

Decoding is pure (bytes in, ``SpanBatch``/``LogBatch`` out) and shared by the HTTP and gRPC
receivers of ``tracescore.server``; large protobuf trace bodies take the columnar decoder
(``decode_traces_columnar``, ptars) straight to the store's Arrow table when it can, with the
reference decoder as fallback; ``span_dicts_from_otlp`` gives the row dicts of
INTERFACES.md for tests and tools.
"""

from ._batch import LOG_COLUMNS, SPAN_COLUMNS, LogBatch, SpanBatch
from ._columnar import decode_traces_columnar
from ._decode import decode_request, encoding_of, span_dicts_from_otlp
from ._errors import DecodeError, UnsupportedContentType, WrongSignalError
from ._json import decode_logs_json, decode_traces_json
from ._pool import POOL_MIN_BYTES, DecodedSpans, DecodePool, decode_spans_arrow
from ._protobuf import decode_logs_protobuf, decode_traces_protobuf

__all__ = [
    "LOG_COLUMNS",
    "POOL_MIN_BYTES",
    "SPAN_COLUMNS",
    "DecodeError",
    "DecodePool",
    "DecodedSpans",
    "LogBatch",
    "SpanBatch",
    "UnsupportedContentType",
    "WrongSignalError",
    "decode_logs_json",
    "decode_logs_protobuf",
    "decode_request",
    "decode_spans_arrow",
    "decode_traces_columnar",
    "decode_traces_json",
    "decode_traces_protobuf",
    "encoding_of",
    "span_dicts_from_otlp",
]
