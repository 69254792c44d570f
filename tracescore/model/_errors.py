"""The root of tracescore's exception tree.

Every error tracescore raises on purpose derives from ``TracescoreError``; each room adds its
own subclasses in its ``_errors.py``::

    TracescoreError
    ├── ConfigError          (tracescore.server / live: a bad config key or file)
    ├── DecodeError          (tracescore.ingest: a body that is not valid OTLP)
    ├── InvalidSql           (tracescore.store: a statement the SQL surface refuses)
    ├── ScorerDefinitionError (tracescore.scoring: a scorer built wrongly)
    └── ScorerRunError       (tracescore.scoring: a step of a scorer run failed)
"""

from __future__ import annotations


class TracescoreError(Exception):
    """Base class of every error tracescore raises deliberately."""
