"""Trace ids as people type them (full, or a unique prefix of 8+ hex digits): the resolver lives
in ``tracescore.traces`` so every room that takes a trace id accepts a prefix; the server's
routes use it from here."""

from tracescore.traces import MIN_PREFIX, PREFIX_SQL, check_trace_ref, resolve_trace_id

__all__ = ["MIN_PREFIX", "PREFIX_SQL", "check_trace_ref", "resolve_trace_id"]
