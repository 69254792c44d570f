"""Judge-reply schemas more than one LLM scorer asks for (claims, statements)."""

from __future__ import annotations

from pydantic import Field

from ._builder import Loose


class Claims(Loose):
    """``{"claims": [...]}``: the checkable statements of a text."""

    claims: list[str] = Field(description="one self-contained, checkable statement each")


class Statements(Loose):
    """``{"statements": [...]}``: a text split into one-idea sentences."""

    statements: list[str] = Field(description="one short sentence with one idea each")
