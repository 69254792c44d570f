"""Parse OTLP/protobuf bodies whose strings are not valid UTF-8.

upb refuses a proto3 string with bad UTF-8, which fails the whole request. Instead, the body is
parsed again with a copy of the OTLP schema in which every string field is ``bytes``, and the
result is copied into the real message with invalid sequences replaced by U+FFFD. Only the rare
bad request pays for this.
"""

from __future__ import annotations

import functools
from typing import Any

from ._errors import DecodeError


@functools.cache
def _lenient_class(full_name: str, root_file: Any) -> Any:
    from google.protobuf import message_factory

    from ._descriptors import edited_pool

    pool = edited_pool(root_file, _strings_to_bytes)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


def _strings_to_bytes(message: Any) -> None:
    from google.protobuf import descriptor_pb2

    string_type = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    for field in message.field:
        if field.type == string_type:
            field.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
    for nested in message.nested_type:
        _strings_to_bytes(nested)


def _copy(source: Any, target: Any) -> None:
    for field, value in source.ListFields():
        target_field = target.DESCRIPTOR.fields_by_name[field.name]
        is_string = target_field.type == target_field.TYPE_STRING
        is_message = target_field.type == target_field.TYPE_MESSAGE
        if _is_repeated(field):
            container = getattr(target, field.name)
            for item in value:
                if is_message:
                    _copy(item, container.add())
                elif is_string:
                    container.append(item.decode("utf-8", "replace"))
                else:
                    container.append(item)
        elif is_message:
            _copy(value, getattr(target, field.name))
        elif is_string:
            setattr(target, field.name, value.decode("utf-8", "replace"))
        else:
            setattr(target, field.name, value)


def _is_repeated(field: Any) -> bool:
    is_repeated = getattr(field, "is_repeated", None)
    if is_repeated is not None:
        return bool(is_repeated)
    return bool(field.label == field.LABEL_REPEATED)


def parse_lenient(message_cls: Any, body: bytes) -> Any:
    """Parse ``body`` as ``message_cls`` with invalid UTF-8 in strings replaced by U+FFFD."""
    descriptor = message_cls.DESCRIPTOR
    lenient = _lenient_class(descriptor.full_name, descriptor.file)()
    try:
        lenient.ParseFromString(body)
    except Exception as exc:
        raise DecodeError(
            f"the body is not a valid OTLP/protobuf request ({exc}); send an "
            "ExportServiceRequest serialized with protobuf, or use application/json"
        ) from exc
    message = message_cls()
    _copy(lenient, message)
    return message


__all__ = ["parse_lenient"]
