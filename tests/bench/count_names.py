"""Count the names the trace transform decides by: string literals in ``tracescore/traces`` that
the code compares span names, tool names or attribute keys with (issue 26).

A literal counts when it is
- an attribute or record key looked up (``x.get("k")``, ``"k" in attrs``, ``attrs["k"]``),
- a name fragment matched (``name.startswith("invoke_agent ")``, ``.endswith(".run")``,
  ``removeprefix``/``removesuffix``),
- compared with ``==``/``!=``/``in`` against anything but the transform's own vocabulary
  (``.kind``, ``.hint``, ``.role``, ``.convention``, a part's ``type`` read as ``ptype``), or
- a member of a module-level tuple, set or dict of strings (a name list).

Docstrings and f-strings (notes for ``--explain``) do not count. The convention adapters
(``_adapt_*.py``) are counted apart from the tree rules: an adapter's job is to know its
convention's keys; the rules should know none. Run it on any checkout:

    .venv/bin/python tests/bench/count_names.py [PACKAGE_DIR]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

_OWN_VOCABULARY = {"kind", "hint", "role", "convention", "step_type", "status", "ptype",
                   "state", "control", "step_status", "verdict", "scorer_type"}
_FRAMEWORK_TOKENS = ("langgraph", "langfuse", "langchain", "mastra", "ai.telemetry", "traceloop",
                     "lmnr", "gcp.vertex", "llama", "crewai", "smolagents", "openlit", "dspy",
                     "autogen", "haystack", "genkit", "voltagent")
_ENVELOPE_KEYS = {"task", "query", "question", "user_input", "user_msg", "input_str", "inputs",
                  "kwargs", "tags", "answer", "final_answer", "raw_output", "text", "response",
                  "result"}
"""Keys of one framework's input or payload envelope, as the rules once listed them."""


def framework_specific(name: str) -> bool:
    """A span-name or tool-name fragment (``.run``, ``transfer_to_``, ``handoff to ``), a key
    carrying a framework's name, or an envelope key a rule looks up by name."""
    lowered = name.lower()
    if name[:1] in "._ " or name[-1:] in "._ ":
        return True
    return any(t in lowered for t in _FRAMEWORK_TOKENS) or name in _ENVELOPE_KEYS
_KEY_METHODS = {"get", "pop", "setdefault"}
_NAME_METHODS = {"startswith", "endswith", "removeprefix", "removesuffix"}


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
    # attribute docstrings: a string expression right after an assignment
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                for stmt in block:
                    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                        out.add(id(stmt.value))
    return out


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) > 1
    ]


def _own(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr in _OWN_VOCABULARY:
        return True
    return isinstance(node, ast.Name) and node.id in _OWN_VOCABULARY


def names_in(source: str) -> set[str]:
    """The decided-by literals of one module (see the module docstring)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found: set[str] = set()
    fstrings = {id(c) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)
                for c in ast.walk(n)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method in _KEY_METHODS | _NAME_METHODS and node.args:
                found.update(_strings(node.args[0]))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            if isinstance(node.slice.value, str):
                found.add(node.slice.value)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_own(side) for side in sides):
                continue
            for side in sides:
                found.update(s for s in _strings(side) if id(side) not in skip)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
            getattr(node, "value", None), (ast.Tuple, ast.Set, ast.Dict, ast.Call, ast.List)
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id.isupper() or (
                isinstance(t, ast.Name) and t.id.startswith("_") and t.id[1:].isupper()
            ) for t in targets):
                found.update(_strings(node.value))
    return {s for s in found if s.strip() and all(id(c) not in fstrings for c in [s])}


_READERS = {"_messages.py", "_span.py", "_trace.py", "_values.py", "_spend.py", "_explain.py",
            "_render.py", "_session.py", "_steps.py", "_message_out.py", "_repr_data.py",
            "_run_text.py", "__init__.py", "_errors.py"}
"""Modules that read formats (message shapes, span rows, OTLP values, costs) or print: counted
apart; the tree rules are the other modules."""


def _vocabulary(package: Path) -> set[str]:
    """The transform's own words (step kinds, hints), which are not names it decides by."""
    source = (package / "traces" / "_steps.py").read_text()
    words = {n.value for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    hints = set()
    for path in (package / "traces").glob("_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == "hint" for t in node.targets
            ):
                hints.update(_strings(node.value))
    return words | hints


def _regex(text: str) -> bool:
    return any(c in text for c in "\\^$[](){}|") and not text.isidentifier()


def count(package: Path) -> dict[str, set[str]]:
    """Decided-by literals of the adapters, of the format readers and of the tree rules."""
    vocabulary = _vocabulary(package)
    out: dict[str, set[str]] = {"adapters": set(), "readers": set(), "rules": set()}
    for path in sorted((package / "traces").glob("_*.py")):
        if path.name.startswith("_adapt"):
            group = "adapters"
        elif path.name in _READERS:
            group = "readers"
        else:
            group = "rules"
        found = names_in(path.read_text())
        out[group] |= {n for n in found if n not in vocabulary and not _regex(n)}
    return out


def main() -> None:
    package = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[2] / "tracescore"
    counted = count(package)
    for group, names in counted.items():
        specific = sorted(n for n in names if framework_specific(n))
        print(f"{group}: {len(names)} literals, {len(specific)} framework-specific")
        print("    framework-specific:", ", ".join(repr(n) for n in specific))


if __name__ == "__main__":
    main()
