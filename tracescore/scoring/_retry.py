"""Judge-error classification, ``Retry-After`` reading, and ``RetryProcessor``.

``classify_error`` sorts any exception (a litellm/OpenAI error, a timeout, a
``ScorerRunError`` by its cause) into ``rate_limit``, ``transient``, ``auth`` or ``permanent``;
the live scheduler and ``RetryProcessor`` both decide from it. Classification reads class names
and status codes, so it never imports litellm.
"""

from __future__ import annotations

import email.utils
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

ErrorClass = Literal["rate_limit", "transient", "auth", "permanent"]
_ErrorKind = Literal["rate_limit", "transient", "auth", "bad_request", "context_length", "unknown"]

_TRANSIENT_NAMES = frozenset({
    "Timeout", "APITimeoutError", "TimeoutError", "ReadTimeout", "ConnectTimeout", "PoolTimeout",
    "TimeoutException", "APIConnectionError", "InternalServerError", "ServiceUnavailableError",
    "BadGatewayError", "ConnectionError", "TransportError", "RemoteProtocolError",
    "NetworkError", "ConnectError", "ReadError", "WriteError", "IncompleteRead",
    "ServerDisconnectedError", "ClientConnectionError",
})
_AUTH_NAMES = frozenset({"AuthenticationError", "PermissionDeniedError"})
_BAD_REQUEST_NAMES = frozenset({
    "BadRequestError", "NotFoundError", "UnprocessableEntityError", "UnsupportedParamsError",
    "ContentPolicyViolationError", "JSONSchemaValidationError", "JudgeOutputError",
    "ScorerDefinitionError",
})
# Raised before any request when no key is set; litellm wraps it as a 500 (InternalServerError).
_MISSING_KEY_MARKERS = ("missing credentials", "api_key client option must be set",
                        "no api key provided", "api key not found")
_CONTEXT_MARKERS = ("context_length_exceeded", "maximum context length", "context window",
                    "too many tokens", "prompt is too long")


def _root(exc: BaseException) -> BaseException | None:
    """The exception to judge: a ``ScorerRunError``'s cause, else the exception itself."""
    seen = 0
    while exc is not None and hasattr(exc, "failed_step") and hasattr(exc, "cause") and seen < 5:
        cause = exc.cause
        if cause is None:
            return None
        exc = cause
        seen += 1
    return exc


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None:
        response = _safe_attr(exc, "response")
        status = getattr(response, "status_code", None)
    try:
        return int(status) if status is not None else None
    except (TypeError, ValueError):
        return None


def _safe_attr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - some SDK properties raise when unset
        return None


def error_kind(exc: BaseException) -> _ErrorKind:
    """A finer classification than ``classify_error`` (bad_request/context_length/unknown)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = _status(exc)
    text = str(exc).lower()
    if "ContextWindowExceededError" in names or (
        ("BadRequestError" in names or status == 400) and any(m in text for m in _CONTEXT_MARKERS)
    ):
        return "context_length"
    if "RateLimitError" in names or status == 429:
        return "rate_limit"
    if names & _AUTH_NAMES or status in (401, 403) or any(m in text for m in _MISSING_KEY_MARKERS):
        return "auth"
    if names & _BAD_REQUEST_NAMES:
        return "bad_request"
    if names & _TRANSIENT_NAMES or (status is not None and (status >= 500 or status == 408)):
        return "transient"
    if status is not None and 400 <= status < 500:
        return "bad_request"
    return "unknown"


def classify_error(exc: BaseException) -> ErrorClass:
    """``"rate_limit"`` (429), ``"transient"`` (5xx, timeouts, dropped connections),
    ``"auth"`` (401/403) or ``"permanent"`` (bad requests, context length, invalid judge
    output, bugs in scorer code). A ``ScorerRunError`` is classified by its cause."""
    root = _root(exc)
    if root is None:
        return "permanent"
    kind = error_kind(root)
    if kind in ("rate_limit", "transient", "auth"):
        return kind
    return "permanent"


def _headers_of(exc: BaseException) -> list[Any]:
    found = []
    for holder in (exc, _safe_attr(exc, "response")):
        if holder is None:
            continue
        for name in ("litellm_response_headers", "headers", "response_headers"):
            headers = _safe_attr(holder, name)
            if headers is not None and hasattr(headers, "get"):
                found.append(headers)
    return found


def _parse_retry_after(value: Any) -> float | None:
    if value is None:
        return None
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def retry_after_s(exc: BaseException) -> float | None:
    """The wait the provider asked for (``retry-after-ms`` / ``Retry-After`` header), seconds."""
    root = _root(exc)
    if root is None:
        return None
    for headers in _headers_of(root):
        ms = _parse_retry_after(_header(headers, "retry-after-ms"))
        if ms is not None:
            return ms / 1000.0
        seconds = _parse_retry_after(_header(headers, "retry-after"))
        if seconds is not None:
            return seconds
    value = _safe_attr(root, "retry_after")
    return _parse_retry_after(value) if isinstance(value, int | float | str) else None


def _header(headers: Any, name: str) -> Any:
    try:
        value = headers.get(name)
        if value is None:
            value = headers.get(name.title())
        return value
    except Exception:  # noqa: BLE001
        return None


@dataclass(frozen=True)
class RetryProcessor:
    """An error processor that retries transient provider errors of a prompt step.

    Retries 429, 5xx, timeouts and dropped connections (and errors a ``matchers`` predicate
    accepts) up to ``max_retries`` times. Waits ``Retry-After`` when the provider sends one (cut
    to ``max_retry_after_ms``), else ``delay_ms`` (a number or ``fn(retry_count) -> ms``; default
    1000 × 2^retry, at most 30 s). Auth, bad-request and context-length errors fail at once
    unless a matcher accepts them; other unknown errors only with ``retry_unknown_errors``.
    """

    max_retries: int = 2
    max_retry_after_ms: float = 30_000
    delay_ms: float | Callable[[int], float] | None = None
    matchers: Sequence[Callable[[BaseException], bool]] = field(default=())
    retry_unknown_errors: bool = False

    def process_error(self, error: BaseException, retry_count: int) -> float | None:
        """Seconds to wait before retrying ``error``, or None to let the step fail."""
        if retry_count >= self.max_retries:
            return None
        kind = error_kind(error)
        matched = any(matcher(error) for matcher in self.matchers)
        if not matched and kind not in ("rate_limit", "transient") and not (
            kind == "unknown" and self.retry_unknown_errors
        ):
            return None
        wait_s = retry_after_s(error)
        if wait_s is not None:
            return min(wait_s, self.max_retry_after_ms / 1000.0)
        if callable(self.delay_ms):
            delay = float(self.delay_ms(retry_count))
        elif self.delay_ms is not None:
            delay = float(self.delay_ms)
        else:
            delay = min(1000.0 * 2**retry_count, 30_000.0)
        return max(0.0, delay) / 1000.0


async def decide_retry(
    processors: Sequence[Any], error: BaseException, retry_count: int
) -> float | None:
    """Ask each error processor in turn; the first that wants a retry gives the wait (s).

    A processor is an object with ``process_error(error, retry_count)`` or a callable
    ``fn(error, retry_count)``, sync or async, returning seconds, True (retry now) or None.
    """
    for processor in processors:
        method = getattr(processor, "process_error", None) or processor
        decision = method(error, retry_count)
        if inspect.isawaitable(decision):
            decision = await decision
        if decision is None or decision is False:
            continue
        if decision is True:
            return 0.0
        return max(0.0, float(decision))
    return None
