"""The column docs of the SQL page's schema panel, read from docs/server.md's table sections.

``python tests/dashboard/schema_docs.py`` rewrites ``tracescore/_web/schema-docs.json`` (package
data: an installed wheel has no docs/ folder); ``test_schema_docs_match_the_server_docs`` fails
when the two disagree.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER_MD = ROOT / "docs" / "server.md"
SCHEMA_DOCS = ROOT / "tracescore" / "_web" / "schema-docs.json"


def parse(markdown: str) -> dict[str, dict[str, str]]:
    """table → column → meaning, from every ``### `table``` section's column table."""
    out: dict[str, dict[str, str]] = {}
    table = None
    for line in markdown.splitlines():
        heading = re.match(r"^### `(\w+)`", line)
        if heading:
            table = heading.group(1)
            continue
        if line.startswith("## ") or line.startswith("### "):
            table = None
        if table is None or not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`(\w+)`", cells[0])
        meaning = cells[-1].replace("`", "")
        for name in names:
            out.setdefault(table, {})[name] = meaning
    return out


def render() -> str:
    """The JSON text ``schema-docs.json`` should hold."""
    return json.dumps(parse(SERVER_MD.read_text()), indent=1, sort_keys=True,
                      ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMA_DOCS.write_text(render())
    print(f"wrote {SCHEMA_DOCS}")
