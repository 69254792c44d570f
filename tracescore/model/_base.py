"""The pydantic base every shared type uses: snake_case fields that also accept camelCase."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Model(BaseModel):
    """Base model: snake_case names, camelCase accepted on input (Mastra-shaped dicts work)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=False,
        arbitrary_types_allowed=True,
        extra="ignore",
    )
