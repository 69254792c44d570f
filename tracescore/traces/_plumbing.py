"""Tool steps completed from the conversation, and tools that are control, not work.

Rules, applied once model calls are known:

- **A tool span that records only its name and call id** gets its args and result from the run's
  conversation (the call the model made, the tool message it was given next).
"""

from __future__ import annotations

from ._steps import TOOL_KINDS, Step


def complete_tools(root: Step) -> None:
    """Fill tool steps without args or result from the conversation of the run they belong to."""
    scopes: dict[int, Step] = {}
    for step in root.walk():
        if step.kind in TOOL_KINDS and (step.tool_args is None or step.tool_result is None):
            owner = step.parent
            while owner is not None and owner.kind != "agent_run":
                owner = owner.parent
            owner = owner or root
            scopes[id(owner)] = owner
    if scopes:
        from ._agent import link_tool_steps

        for owner in scopes.values():
            link_tool_steps(owner)


__all__ = ["complete_tools"]
