"""Errors of the ingest room.

::

    TracescoreError
    └── DecodeError        a request body that is not valid OTLP (answered with HTTP 400)
        ├── WrongSignalError        a body of another signal (logs posted to /v1/traces)
        └── UnsupportedContentType  neither protobuf nor JSON (answered with HTTP 415)
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class DecodeError(TracescoreError):
    """The body could not be decoded as an OTLP export request."""


class WrongSignalError(DecodeError):
    """The body decodes, but as another signal than the endpoint takes (logs sent to traces)."""


class UnsupportedContentType(DecodeError):
    """The request's content type is neither OTLP/protobuf nor OTLP/JSON."""


__all__ = ["DecodeError", "UnsupportedContentType", "WrongSignalError"]
