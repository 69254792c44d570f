"""Counters of the OTLP receivers, kept on ``app.state.ingest_stats`` for /healthz and /metrics.

Plain dicts updated on the event loop (no locks needed); whoever exports Prometheus metrics
reads them: requests by (transport, outcome), spans and log records received by project,
and rejected items by reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(slots=True)
class IngestStats:
    """What the OTLP receivers have seen since start."""

    requests: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(transport, outcome) → requests. transport: http|grpc; outcome: ok, partial,
    bad_request, too_large, unsupported, unauthorized, queue_full, unavailable, error."""
    spans_received: Counter[str] = field(default_factory=Counter)
    """project → spans accepted (committed) by the receivers."""
    logs_received: Counter[str] = field(default_factory=Counter)
    """project → log records accepted (committed)."""
    rejected: Counter[str] = field(default_factory=Counter)
    """reason → spans or records rejected (invalid_id, decode_error, too_large, queue_full,
    unavailable)."""

    def count_rows(self, kind: str, projects: Mapping[str, int]) -> None:
        """Add committed rows (rows per project)."""
        target = self.spans_received if kind == "traces" else self.logs_received
        target.update(projects)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready totals."""
        return {
            "requests": {f"{t}:{o}": n for (t, o), n in sorted(self.requests.items())},
            "spans_received": dict(self.spans_received),
            "logs_received": dict(self.logs_received),
            "rejected": dict(self.rejected),
        }


__all__ = ["IngestStats"]
