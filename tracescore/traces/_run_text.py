"""The texts a value carries, for comparing what spans contain (not what they are named).

A span's input or output arrives as plain text, JSON, a message list, a framework's record, or a
Python ``repr`` of a framework object (``ChatMessage(role=…, blocks=[TextBlock(text='…')])``,
``id='…' source='user' content='…'``). The tree rules compare such values by the texts they
carry: ``texts_of`` collects them (string leaves of data; the quoted strings inside a repr), and
``same_text`` compares two texts as a reader would (whitespace and surrounding quotes aside).
A repr is read, never shown: ``is_repr`` tells the rules not to use one as a message's text.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ._values import parse_json

_MAX_TEXTS = 200
"""At most this many texts are collected from one value (big states stay cheap to read)."""
_MAX_DEPTH = 12

_REPR = re.compile(
    r"""^\s*(?:
        [A-Za-z_][\w.]*\((?:\s*\)|.*\b[A-Za-z_]\w*\s*=)   # Cls(field=…) or Cls()
      | <[\w.]+(?:\s[^>]*)?\sobject\sat\s0x[0-9a-fA-F]+>  # <pkg.Cls object at 0x…>
      | <[\w.]+\sobject\s\S+\sat\s0x[0-9a-fA-F]+>  # <async_generator object f.<locals>.g at 0x…>
      | [A-Za-z_]\w*=(?:'|"|\[|\{|\d|None|True|False|[A-Z]\w*\()  # id='…' source='user' …
    )""",
    re.VERBOSE | re.DOTALL,
)
_QUOTED = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\"""", re.DOTALL)
_CUT_QUOTED = re.compile(r"""['"]((?:[^'"\\\n]|\\.){12,}?)(?:\.\.\.|\u2026)$""")
"""A quoted string a framework cut short at the end of a repr (``text='It is cloudy in P...``)."""
_CUT = ("...", "\u2026")
_MIN_CUT = 12


def is_repr(text: Any) -> bool:
    """True when ``text`` is a Python object's repr (a framework message or event printed with
    ``repr``), which is never a message's text."""
    return isinstance(text, str) and bool(_REPR.match(text))


def norm(text: str) -> str:
    """``text`` with runs of whitespace made one space and surrounding space and quotes gone."""
    return " ".join(text.split()).strip("'\"")


def same_text(a: str, b: str) -> bool:
    """True when two texts read the same (whitespace and surrounding quotes aside); a text cut
    short by an exporter (ending in ``...``) reads as any text it begins."""
    if not a or not b:
        return False
    if a == b:
        return True
    na, nb = norm(a), norm(b)
    if na == nb:
        return True
    for cut, whole in ((na, nb), (nb, na)):
        if cut.endswith(_CUT):
            core = cut.rstrip(".\u2026").rstrip()
            if len(core) >= _MIN_CUT and whole.startswith(core):
                return True
    return False


def repr_strings(text: str) -> list[str]:
    """The string literals quoted inside a repr, unescaped (``text='It is cloudy'`` → ``It is
    cloudy``)."""
    out: list[str] = []
    for match in _QUOTED.finditer(text):
        literal = match.group(0)
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = literal[1:-1]
        if isinstance(value, str) and value.strip():
            out.append(value)
        if len(out) >= _MAX_TEXTS:
            break
    cut = _CUT_QUOTED.search(text)
    if cut is not None and len(out) < _MAX_TEXTS:
        out.append(cut.group(1) + "...")
    return out


def texts_of(value: Any) -> list[str]:
    """Every text ``value`` carries: itself when plain text; the string leaves of data (JSON
    parsed); the strings quoted inside a repr. In order, at most ``_MAX_TEXTS``."""
    out: list[str] = []
    _collect(value, out, 0)
    return out


def _collect(value: Any, out: list[str], depth: int) -> None:
    if len(out) >= _MAX_TEXTS or depth > _MAX_DEPTH or value is None:
        return
    if isinstance(value, str):
        if not value.strip():
            return
        parsed = parse_json(value)
        if parsed is not value and not isinstance(parsed, str):
            _collect(parsed, out, depth + 1)
        elif is_repr(value):
            out.extend(repr_strings(value)[: _MAX_TEXTS - len(out)])
        else:
            out.append(value)
        return
    if isinstance(value, dict):
        for item in value.values():
            _collect(item, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, out, depth + 1)


def reads_as(value: Any, wanted: list[str]) -> bool | None:
    """Whether ``value`` carries one of the ``wanted`` texts: None when it carries no text at
    all (nothing to compare), else True or False."""
    texts = texts_of(value)
    if not texts:
        return None
    wanted = [w for w in wanted if w]
    return any(same_text(t, w) for t in texts for w in wanted)


__all__ = ["is_repr", "norm", "reads_as", "repr_strings", "same_text", "texts_of"]
