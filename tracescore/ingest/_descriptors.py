"""Copies of the OTLP protobuf schema with their message definitions edited, in a private pool.

The lenient parse (``_lenient.py``: strings read as bytes) and the columnar decoder
(``_columnar_schema.py``: only the stored fields) each parse the same wire bytes with a schema
of their own; this builds one from the real descriptors, field numbers unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def edited_pool(root_file: Any, edit: Callable[[Any], None]) -> Any:
    """A new ``DescriptorPool`` holding ``root_file`` and its dependencies, with ``edit`` applied
    to every top-level ``DescriptorProto`` of each file before it is added."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file_descriptor: Any) -> None:
        if file_descriptor.name in added:
            return
        for dependency in file_descriptor.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file_descriptor.CopyToProto(proto)
        for message in proto.message_type:
            edit(message)
        pool.Add(proto)
        added.add(file_descriptor.name)

    add(root_file)
    return pool


__all__ = ["edited_pool"]
