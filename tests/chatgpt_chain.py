"""A ChatGPT export conversation built in code: one linear chain of alternating turns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def linear_conversation(c: int, messages: int, text: Callable[[int, int], str], *,
                        start: int = 1786000000, **extra: Any) -> dict[str, Any]:
    """Conversation ``conv-<c>`` of ``messages`` turns (user first), turn ``m`` saying
    ``text(c, m)``; ``extra`` fields go on the conversation."""
    mapping: dict[str, Any] = {}
    parent = None
    for m in range(messages):
        node = f"c{c}-m{m}"
        mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
            "id": node, "author": {"role": "user" if m % 2 == 0 else "assistant"},
            "create_time": start + c * 60 + m,
            "content": {"content_type": "text", "parts": [text(c, m)]}}}
        if parent is not None:
            mapping[parent]["children"].append(node)
        parent = node
    return {"id": f"conv-{c}", "title": f"Chat {c}", "mapping": mapping, "current_node": parent,
            **extra}
