"""Decode large OTLP trace bodies in worker processes, so decoding uses more than one core.

Decoding holds the GIL for most of its time (the reference decoder walks protobuf attributes in
Python, ~14 µs per 1 KB span with its Arrow table; the columnar decoder that large protobuf
bodies take, ``_columnar.py``, about half that); in the server it competes with HTTP handling
and the writer. ``DecodePool`` sends bodies of at least ``min_bytes`` to ``workers`` spawned
processes, which decode them and build the Arrow table the store inserts; the table comes back
as Arrow IPC (one buffer, no per-row objects).
Smaller bodies are decoded inline; large log bodies, and large trace bodies when ``workers``
is 0, are decoded in a thread (trace bodies straight to their Arrow table, as in a worker), so
a big request never holds the event loop for its whole decode (the GIL still switches every
few ms). A worker that dies is replaced; its request is
decoded in a thread. Workers exit on their own when the server process dies. Workers are
spawned, so a script that builds the app itself needs the usual
``if __name__ == "__main__":`` guard when ``decode_workers`` > 0.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ._batch import LogBatch, SpanBatch
from ._columnar import decode_traces_columnar
from ._decode import Encoding, Signal, decode_request
from ._limits import MAX_ATTRIBUTE_BYTES

log = logging.getLogger(__name__)

POOL_MIN_BYTES = 128 * 1024
"""Bodies smaller than this are decoded inline (the round trip to a worker costs ~1 ms, to a
thread ~0.1 ms; such a body decodes in about 2 ms)."""


@dataclass(slots=True)
class DecodedSpans:
    """Spans decoded by a worker: the store-ready Arrow table and what was rejected."""

    arrow_table: Any
    rejected: int
    error_message: str
    projects: Counter[str]

    def __len__(self) -> int:
        return int(self.arrow_table.num_rows)

    def project_counts(self) -> Counter[str]:
        """Spans per project."""
        return self.projects


def _init_worker(parent_pid: int) -> None:
    """Ignore Ctrl-C (the server shuts the pool down) and exit when the server dies, even by
    SIGKILL (a worker blocked on its queue would not notice otherwise)."""
    import os
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch_parent() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch_parent, name="parent-watch", daemon=True).start()


def _ping() -> bool:
    return True


COLUMNAR_MAX_BYTES = 2 * 1024 * 1024
"""Larger protobuf bodies take the reference decoder: ptars parses a body in one call that
holds the GIL throughout (about 45 ms for 3.8 MB here), so beyond this a request's decode
thread would stall the event loop (``/healthz``, other requests) for longer than the reference
decoder, whose pure-Python walk lets the interpreter switch threads every few milliseconds."""


def decode_spans_arrow(
    body: bytes,
    encoding: Encoding,
    project: str | None,
    max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES,
) -> DecodedSpans:
    """Decode a traces body straight to the Arrow table the store inserts (in the calling
    thread), so the single writer thread only concatenates and inserts.

    A protobuf body of at most ``COLUMNAR_MAX_BYTES`` goes through the columnar decoder
    (``_columnar.py``) when it can take it, else through the reference decoder; both give the
    same table."""
    from tracescore.store import arrow_span_table

    if encoding == "protobuf" and len(body) <= COLUMNAR_MAX_BYTES:
        decoded = decode_traces_columnar(
            body, project=project, max_attribute_bytes=max_attribute_bytes)
        if decoded is not None:
            table, projects = decoded
            return DecodedSpans(table, 0, "", projects)
    batch = decode_request(
        body,
        encoding=encoding,
        kind="traces",
        project=project,
        max_attribute_bytes=max_attribute_bytes,
    )
    assert isinstance(batch, SpanBatch)
    return DecodedSpans(arrow_span_table(batch), batch.rejected, batch.error_message,
                        batch.project_counts())


def decode_to_arrow(
    body: bytes,
    encoding: Encoding,
    project: str | None,
    max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES,
) -> tuple[bytes, int, str, dict[str, int]]:
    """Worker side: decode a traces body and return (Arrow IPC stream, rejected, message,
    spans per project)."""
    import pyarrow as pa

    decoded = decode_spans_arrow(body, encoding, project, max_attribute_bytes)
    table = decoded.arrow_table
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return (
        sink.getvalue().to_pybytes(),
        decoded.rejected,
        decoded.error_message,
        dict(decoded.projects),
    )


class DecodePool:
    """Worker processes for decoding large trace bodies (see the module docstring)."""

    def __init__(
        self,
        workers: int,
        *,
        min_bytes: int = POOL_MIN_BYTES,
        max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES,
    ) -> None:
        self.workers = workers
        self.min_bytes = min_bytes
        self.max_attribute_bytes = max_attribute_bytes
        self._executor: Any = None

    def start(self) -> None:
        """Create the process pool (workers spawn on first use)."""
        if self.workers <= 0 or self._executor is not None:
            return
        import multiprocessing
        import os
        from concurrent.futures import ProcessPoolExecutor

        self._executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(os.getpid(),),
        )

    def warm_up(self) -> None:
        """Start every worker now (blocking) instead of on the first large body."""
        if self._executor is not None:
            for future in [self._executor.submit(_ping) for _ in range(self.workers)]:
                future.result()

    def close(self) -> None:
        """Stop the workers."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    async def decode(
        self, body: bytes, *, encoding: Encoding, kind: Signal, project: str | None
    ) -> SpanBatch | LogBatch | DecodedSpans:
        """Decode a body: inline when small, else in a worker (traces) or a thread; raises
        ``DecodeError``."""
        if kind == "traces":
            return await self.decode_traces(body, encoding=encoding, project=project)
        return await self._decode_here(body, encoding, kind, project)

    async def _decode_here(
        self, body: bytes, encoding: Encoding, kind: Signal, project: str | None
    ) -> SpanBatch | LogBatch:
        """Decode in this process: inline when small, in a thread when large."""
        decode = functools.partial(
            decode_request,
            body,
            encoding=encoding,
            kind=kind,
            project=project,
            max_attribute_bytes=self.max_attribute_bytes,
        )
        if len(body) < self.min_bytes:
            return decode()
        return await asyncio.to_thread(decode)

    async def decode_traces(
        self, body: bytes, *, encoding: Encoding, project: str | None
    ) -> SpanBatch | DecodedSpans:
        """Decode a traces body, in a worker when it is large enough; raises ``DecodeError``.

        Without workers a large body is decoded in a thread straight to its Arrow table (the
        writer thread, which every commit waits for, then has less to do)."""
        if len(body) < self.min_bytes:
            batch = await self._decode_here(body, encoding, "traces", project)
            assert isinstance(batch, SpanBatch)
            return batch
        if self._executor is None:
            return await asyncio.to_thread(
                decode_spans_arrow, body, encoding, project, self.max_attribute_bytes)
        from concurrent.futures.process import BrokenProcessPool

        loop = asyncio.get_running_loop()
        try:
            ipc, rejected, message, projects = await loop.run_in_executor(
                self._executor, decode_to_arrow, body, encoding, project,
                self.max_attribute_bytes,
            )
        except BrokenProcessPool:
            log.warning("a decode worker died; restarting the pool and decoding in a thread")
            self.close()
            self.start()
            batch = await self._decode_here(body, encoding, "traces", project)
            assert isinstance(batch, SpanBatch)
            return batch
        import pyarrow as pa

        table = pa.ipc.open_stream(pa.py_buffer(ipc)).read_all()
        return DecodedSpans(table, rejected, message, Counter(projects))


__all__ = ["COLUMNAR_MAX_BYTES", "POOL_MIN_BYTES", "DecodePool", "DecodedSpans",
           "decode_spans_arrow", "decode_to_arrow"]
