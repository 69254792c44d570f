"""The live scorer's row helpers: the stable score id and the JSON-ready copy of values."""

from __future__ import annotations

import enum
import uuid

import orjson

from tracescore.live import score_id_for
from tracescore.live._rows import plain
from tracescore.model import Message

NAMESPACE = uuid.UUID("6f1c8a52-3d0b-4f57-9a4e-2b7f0f0d5c11")


def test_score_id_is_the_uuid5_of_the_pair() -> None:
    pairs = [("0" * 32, "1" * 16, "tool-failures", "v1"),
             ("ab" * 16, "", "no-tool-errors", "3f2a9c"),
             ("cd" * 16, "ef" * 8, "scorer with spaces/and slashes", "é-version")]
    for trace_id, span_id, scorer_id, version in pairs:
        expected = uuid.uuid5(NAMESPACE, f"{trace_id}/{span_id}/{scorer_id}/{version}")
        got = score_id_for(trace_id, span_id, scorer_id, version)
        assert got == str(expected)
        assert uuid.UUID(got).version == 5


class Color(enum.StrEnum):
    RED = "red"


def test_plain_keeps_atoms_and_copies_containers() -> None:
    nested = {"a": [1, 2.5, None, True], 3: ("x", Color.RED)}
    got = plain(nested)
    assert got == {"a": [1, 2.5, None, True], "3": ["x", "red"]}
    assert got is not nested and got["a"] is not nested["a"]
    assert type(got["3"][1]) is Color  # a str subclass is kept as it is


def test_plain_turns_models_into_their_json_text() -> None:
    message = Message(role="assistant", content="hi")
    got = plain({"messages": [message]})
    assert orjson.loads(orjson.dumps(got)) == {
        "messages": [orjson.loads(message.model_dump_json(exclude_none=True))]}
