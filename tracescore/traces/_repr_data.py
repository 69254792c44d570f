"""Python reprs read as data: framework objects that an instrumentation printed with ``repr``.

Instrumentations of Python frameworks often record a message or event as its repr:
``ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='Hi')])`` (Haystack),
``ChatMessage(role=<MessageRole.USER: 'user'>, blocks=[TextBlock(text='Hi')])`` (LlamaIndex),
``id='…' source='user' content='Hi' type='TextMessage'`` (AutoGen). ``repr_data`` reads such a
text into plain data — a call ``Cls(k=v)`` becomes ``{"__class__": "Cls", "k": v}`` (a leading
underscore of a field name dropped), an enum ``<Enum.X: 'x'>`` its value ``'x'``, a bare field
list ``k=v k2=v2`` a record — so messages and tool calls inside are read like any other, and the
repr itself is never shown as text. Only literals are read: nothing is evaluated, and a text that
is not a whole repr (cut short by an exporter) reads as None.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Any

_ENUM = re.compile(r"<[\w.]+:\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?)>")
_OBJECT = re.compile(r"<[\w.]+(?:\s[^<>]*)?\sobject\sat\s0x[0-9a-fA-F]+>")
_FUNCTION = re.compile(r"<(?:function|bound method|class|module)\s[^<>]*>")
_MAX_CHARS = 200_000


def repr_data(text: str) -> Any:
    """The data a Python repr holds (see the module docstring), or None when it cannot be read."""
    if not isinstance(text, str) or len(text) > _MAX_CHARS:
        return None
    source = _ENUM.sub(r"\1", text.strip())
    source = _OBJECT.sub("None", source)
    source = _FUNCTION.sub("None", source)
    node = _parse(source)
    if node is None and re.match(r"[A-Za-z_]\w*=", source):
        node = _parse(f"_({_commas(source)})")  # a bare field list: k='v' k2=...
    if node is None:
        return None
    try:
        return _value(node)
    except (ValueError, TypeError, RecursionError):
        return None


def _parse(source: str) -> ast.expr | None:
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return tree.body


def _commas(source: str) -> str:
    """``a=1 b='x'`` → ``a=1, b='x'`` (commas before each top-level ``name=``)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    cuts: list[int] = []
    depth = 0
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    previous: tokenize.TokenInfo | None = None
    for index, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif (
            depth == 0
            and token.type == tokenize.NAME
            and index + 1 < len(tokens)
            and tokens[index + 1].string == "="
            and previous is not None
            and previous.string != ","
        ):
            cuts.append(offsets[token.start[0] - 1] + token.start[1])
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            previous = token
    out = source
    for at in reversed(cuts):
        out = out[:at].rstrip() + ", " + out[at:]
    return out


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            (_value(k) if k is not None else "**"): _value(v)
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.Call):
        record: dict[str, Any] = {}
        name = _name(node.func)
        if name and name != "_":
            record["__class__"] = name
        for position, arg in enumerate(node.args):
            record[f"arg{position}"] = _value(arg)
        for keyword in node.keywords:
            if keyword.arg is not None:
                record[keyword.arg.lstrip("_") or keyword.arg] = _value(keyword.value)
        return record
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _name(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _value(node.operand)
        return -value if isinstance(value, (int, float)) else value
    raise ValueError("not a literal")


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


__all__ = ["repr_data"]
