"""Errors of the labels room.

::

    TracescoreError
    └── LabelsError               (tracescore.labels: anything a label call refuses)
        ├── InvalidLabel          a label or schema that cannot be stored (also a ValueError)
        ├── LabelsNotFound        no such schema, queue or queue item (also a LookupError)
        ├── QueueExists           ``create_queue`` with a name already taken
        └── AlignError            ``align`` cannot run (too few labels, no judge, ...)
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class LabelsError(TracescoreError):
    """Base class of the errors the labels functions raise deliberately."""


class InvalidLabel(LabelsError, ValueError):
    """A label, schema or queue definition that cannot be stored; the message names the field."""


class LabelsNotFound(LabelsError, LookupError):
    """The schema, queue or queue item named does not exist."""


class QueueExists(LabelsError):
    """A review queue with this name already exists."""


class AlignError(LabelsError):
    """Alignment cannot run as asked; the message says what is missing."""


__all__ = ["AlignError", "InvalidLabel", "LabelsError", "LabelsNotFound", "QueueExists"]
