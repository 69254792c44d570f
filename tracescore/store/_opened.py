"""``opened_store``: one way for library calls to take ``store=`` as a path or an open Store."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from ._errors import StoreError


@contextlib.contextmanager
def opened_store(store: Any) -> Iterator[Any]:
    """Yield an open ``Store``: a path is opened here and closed on exit, an open ``Store``
    (anything with ``read`` and ``write_sync``) is used as it is."""
    if isinstance(store, (str, os.PathLike)):
        from ._store import Store

        opened = Store(os.fspath(store)).open()
        try:
            yield opened
        finally:
            opened.close()
    elif callable(getattr(store, "read", None)) and callable(getattr(store, "write_sync", None)):
        yield store
    else:
        raise StoreError(
            f"store must be a database path, an http(s) URL of a running tracescore server, or "
            f"an open Store; got {type(store).__name__}"
        )


__all__ = ["opened_store"]
