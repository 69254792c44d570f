"""Errors of cluster mode::

    TracescoreError
    └── ClusterError            (a cluster node cannot do its part; the message says why)
        ├── ClusterConfigError  (a bad [cluster] key: names the key and the file)
        ├── ClusterUnavailable  (the [cluster] extra is not installed, or PostgreSQL / the lake
        │                        cannot be reached)
        └── FlushFailed         (a flush to the lake did not commit after its retries; nothing
                                 acknowledged is lost: the rows stay in the node's file)
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class ClusterError(TracescoreError):
    """Base class of cluster mode's errors."""


class ClusterConfigError(ClusterError):
    """A ``[cluster]`` key is missing or wrong."""


class ClusterUnavailable(ClusterError):
    """Cluster mode cannot run here: the extra is missing or a service cannot be reached."""


class FlushFailed(ClusterError):
    """A flush did not commit; the next flush copies the same rows again."""


__all__ = ["ClusterConfigError", "ClusterError", "ClusterUnavailable", "FlushFailed"]
