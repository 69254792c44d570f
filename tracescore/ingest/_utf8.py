"""Load OTLP/JSON bodies whose strings are not valid Unicode, with U+FFFD in place of the bad parts.

orjson refuses a raw byte that is not UTF-8 (``\\xff``) and a lone surrogate escape
(``"\\ud800"``, what JavaScript's ``JSON.stringify`` writes for a cut emoji), failing the whole
request. Protobuf bodies get U+FFFD for bad bytes (``_lenient.py``); this is the same promise for
JSON. Only a body orjson refused pays for it: the bytes are decoded with ``errors="replace"``,
parsed by the standard library (which accepts lone surrogates), and every string with a
surrogate left in it has that surrogate replaced.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _clean_tree(document: Any) -> Any:
    """Replace surrogates in every string (keys too), without recursion (depth is unbounded)."""
    if isinstance(document, str):
        return _clean(document)
    root: list[Any] = [document]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        value = container[key]
        if isinstance(value, str):
            container[key] = _clean(value)
        elif isinstance(value, list):
            stack.extend((value, index) for index in range(len(value)))
        elif isinstance(value, dict):
            if any(_SURROGATE.search(name) for name in value):
                value = {_clean(name): item for name, item in value.items()}
                container[key] = value
            stack.extend((value, name) for name in value)
    return root[0]


def load_lenient(body: bytes) -> Any | None:
    """The parsed body with bad UTF-8 and lone surrogates as U+FFFD; None if it is not JSON."""
    try:
        document = json.loads(body.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return _clean_tree(document)


__all__ = ["load_lenient"]
