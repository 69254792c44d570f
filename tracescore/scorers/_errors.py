"""Errors raised by the prebuilt scorers and trajectory utilities.

::

    TracescoreError                   (tracescore.model)
    └── TrajectoryCheckError          also a ValueError: a budget that is not a positive
                                      number, or a budget whose measurement the trajectory
                                      does not carry (no token counts, no durations)

Factory arguments that cannot build a scorer raise ``ValueError`` / ``TypeError`` with a
sentence naming the argument.
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class TrajectoryCheckError(TracescoreError, ValueError):
    """A trajectory check cannot give an honest answer (bad budget, missing measurement)."""
