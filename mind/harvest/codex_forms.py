"""The forms a Codex rollout writes one message in, and which of them repeat another.

A prompt or an answer can be in a rollout up to three times: the ``response_item`` message
(tier 0), the ``user_message``/``agent_message`` event (tier 1) and the ``item_completed``
event's ``UserMessage``/``AgentMessage`` item (tier 2). Which forms a file holds depends on the
Codex version and client: Codex Desktop writes some prompts only as events, some versions write
answers only as response items. :func:`message_form` reads any of them; :class:`Echoes` says
which ones repeat a message a lower tier already carries, counted over the whole file (each
lower-tier message cancels one equal message of each higher tier), so the order the forms are
written in does not matter and a prompt typed twice stays twice.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any, Final

from mind.harvest.jsonstream import as_dict, as_list, as_str

Form = tuple[int, str, str]  # (tier, role, text)
Record = tuple[int, str, dict[str, Any], Any]  # (line, kind, payload, raw timestamp)
# blocks Codex injects as "user" messages: context, not what the user typed
INJECTED: Final = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                   "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>", "<image",
                   "</image>", "<skill>")
IMAGE: Final = "[Shared image]"
_ITEM_ROLES: Final = {"UserMessage": "user", "AgentMessage": "assistant"}
def user_text(content: Any) -> str:
    """A user ``message`` item's prompt: its text blocks, one ``[Shared image]`` per image, the
    blocks Codex injects left out."""
    pieces = []
    for block in (as_dict(b) for b in as_list(content)):
        text = as_str(block.get("text")).strip()
        if block.get("type") == "input_image":
            pieces.append(IMAGE)
        elif text and not text.startswith(INJECTED):
            pieces.append(text)
    return "\n\n".join(pieces)


def _event_user_text(payload: dict[str, Any]) -> str:
    """A ``user_message`` event's prompt: its text, one ``[Shared image]`` per image; nothing
    for the context blocks older versions sent as events of another ``kind``."""
    text = as_str(payload.get("message")).strip()
    if payload.get("kind") not in (None, "plain") or text.startswith(INJECTED):
        return ""
    images = len(as_list(payload.get("images"))) + len(as_list(payload.get("local_images")))
    return "\n\n".join([text] * bool(text) + [IMAGE] * images)


def _texts(content: Any) -> list[str]:
    return [text for b in as_list(content) if (text := as_str(as_dict(b).get("text")).strip())]


def message_form(kind: str, payload: dict[str, Any]) -> Form | None:
    """The message a record carries as ``(tier, role, text)`` (``text`` empty when nothing in
    it is the user's or the assistant's), or ``None`` for any other record."""
    role = payload.get("role")
    if kind == "response_item" and payload.get("type") in ("message", None) and role == "user":
        return 0, "user", user_text(payload.get("content"))
    if kind == "response_item" and payload.get("type") == "message" and role == "assistant":
        return 0, "assistant", "\n\n".join(_texts(payload.get("content")))
    if kind != "event_msg":
        return None
    event = payload.get("type")
    if event == "user_message":
        return 1, "user", _event_user_text(payload)
    if event == "agent_message":
        return 1, "assistant", as_str(payload.get("message")).strip()
    item = as_dict(payload.get("item"))
    if event == "item_completed" and (item_role := _ITEM_ROLES.get(as_str(item.get("type")))):
        text = "".join(as_str(as_dict(b).get("text")) for b in as_list(item.get("content")))
        return 2, item_role, "" if text.strip().startswith(INJECTED) else text.strip()
    return None


def _key(role: str, text: str) -> bytes:
    """The message's role and text, whitespace and image markers aside, as a digest: a
    session's messages are counted without holding their text."""
    words = " ".join(text.replace(IMAGE, " ").split())
    return hashlib.blake2b(f"{role}\0{words}".encode("utf-8", "surrogatepass"),
                           digest_size=16).digest()


class Echoes:
    """Every message form of a rollout is :meth:`count`-ed first; :meth:`repeated` is then
    asked once per event form, in file order."""

    def __init__(self) -> None:
        self._counts: list[Counter[bytes]] = [Counter(), Counter()]
        self._left: dict[tuple[int, int], Counter[bytes]] | None = None

    def count(self, form: Form) -> None:
        if form[0] < 2:
            self._counts[form[0]][_key(form[1], form[2])] += 1

    def repeated(self, form: Form) -> bool:
        """Whether this event form repeats a message of a lower tier (which it then uses up)."""
        if self._left is None:
            items, events = self._counts
            self._left = {(1, 0): items, (2, 0): items.copy(), (2, 1): events}
        key = _key(form[1], form[2])
        for lower in range(form[0]):
            left = self._left[(form[0], lower)]
            if left[key] > 0:
                left[key] -= 1
                return True
        return False
