"""Errors raised by ``run_evals``.

Validation happens before anything runs, so a bad data set or scorer list fails fast with a
sentence that names the item, the key or the scorer and says what to change::

    TracescoreError
    └── EvalError              (tracescore.evals: anything run_evals raises on purpose)
        └── EvalValidationError (also a ValueError: bad data, scorers, gates or thresholds)

Failures of the target or of a scorer on one item are not raised: they are recorded on that
item (``EvalResult.items[i].error``) unless ``fail_fast=True``, which re-raises the original
exception with a note naming the item.
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class EvalError(TracescoreError):
    """Base class of the errors ``run_evals`` raises deliberately."""


class EvalValidationError(EvalError, ValueError):
    """The data, scorers, gates or thresholds given to ``run_evals`` cannot be run."""
