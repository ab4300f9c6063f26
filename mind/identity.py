"""Layer 0 — identity: who this mind is (a single row, ``id = 1``).

Column names in
``UPDATE`` statements come from a fixed whitelist, never from caller-supplied keys; an unknown
field name is a :class:`ValidationError`.

Decisions:

- ``name`` must be a non-blank string (a bare name is enough to be an identity, an empty one is
  not); every field must be a ``str`` within its limit (:data:`LIMITS`); ``name``, ``role``
  and ``department`` are names: no control or bidi characters (:func:`mind.bounds.name_text`).
- ``create`` on a mind that already has an identity raises :class:`ConflictError`;
  ``set`` is the create-or-update convenience (creating needs ``name``).
- Timestamps are written by Python in the house format (``created_at``/``updated_at``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from mind.bounds import bounded_text, name_text
from mind.errors import ConflictError, NotFoundError, ValidationError
from mind.storage.db import Database
from mind.timeutil import now_iso
from vocabulary.limits import MAX_PROFILE_TEXT_CHARS, MAX_SHORT_NAME_CHARS, MAX_SYSTEM_PROMPT_CHARS

# Public field name -> column name. The only source of column names in SQL text.
FIELDS: Final[dict[str, str]] = {
    "name": "name",
    "role": "role",
    "department": "department",
    "personality": "personality",
    "capabilities": "capabilities",
    "system_prompt": "system_prompt",
}

# Longest value of each field, in characters; the first three are names (no controls, no bidi).
LIMITS: Final[dict[str, int]] = {
    "name": MAX_SHORT_NAME_CHARS,
    "role": MAX_SHORT_NAME_CHARS,
    "department": MAX_SHORT_NAME_CHARS,
    "personality": MAX_PROFILE_TEXT_CHARS,
    "capabilities": MAX_PROFILE_TEXT_CHARS,
    "system_prompt": MAX_SYSTEM_PROMPT_CHARS,
}
_NAMES: Final = ("name", "role", "department")

# Labels of the optional context lines, in output order.
_CONTEXT_LABELS: Final = (
    ("role", "Role"),
    ("department", "Department"),
    ("personality", "Personality"),
    ("capabilities", "Capabilities"),
    ("system_prompt", "System Prompt"),
)

_SELECT = (
    "SELECT name, role, department, personality, capabilities, system_prompt, "
    "created_at, updated_at FROM identity WHERE id = 1"
)


@dataclass(frozen=True, slots=True)
class Identity:
    name: str
    role: str
    department: str
    personality: str
    capabilities: str
    system_prompt: str
    created_at: str
    updated_at: str


def _check_fields(fields: dict[str, Any]) -> dict[str, str]:
    """Reject unknown keys and non-string values; drop ``None`` values."""
    unknown = sorted(key for key in fields if key not in FIELDS)
    if unknown:
        raise ValidationError(
            f"unknown identity field(s) {', '.join(map(repr, unknown))}: "
            f"expected one of {', '.join(FIELDS)}"
        )
    clean: dict[str, str] = {}
    for key, value in fields.items():
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValidationError(f"identity field {key!r} must be a string")
        if key == "name" and not value.strip():
            raise ValidationError("identity name must not be empty")
        if key in _NAMES and value.strip():  # role and department may be cleared ("")
            clean[key] = name_text(value, f"identity {key}", LIMITS[key])
        else:
            clean[key] = bounded_text(value, f"identity {key}", LIMITS[key])
    return clean


def _from_row(row: Any) -> Identity:
    return Identity(
        name=row["name"],
        role=row["role"],
        department=row["department"],
        personality=row["personality"],
        capabilities=row["capabilities"],
        system_prompt=row["system_prompt"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class IdentityLayer:
    """Read and write the mind's single identity row."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(
        self,
        name: str,
        role: str = "",
        department: str = "",
        personality: str = "",
        capabilities: str = "",
        system_prompt: str = "",
    ) -> Identity:
        fields = _check_fields(
            {
                "name": name,
                "role": role,
                "department": department,
                "personality": personality,
                "capabilities": capabilities,
                "system_prompt": system_prompt,
            }
        )
        if "name" not in fields:
            raise ValidationError("identity name is required")
        now = now_iso()
        async with self._db.transaction():
            _, inserted = await self._db.execute(
                "INSERT INTO identity (id, name, role, department, personality, capabilities, "
                "system_prompt, created_at, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO NOTHING",
                (
                    fields["name"],
                    fields.get("role", ""),
                    fields.get("department", ""),
                    fields.get("personality", ""),
                    fields.get("capabilities", ""),
                    fields.get("system_prompt", ""),
                    now,
                    now,
                ),
            )
            if inserted != 1:
                raise ConflictError("an identity is already configured; use update() or set()")
            return await self.get()

    async def find(self) -> Identity | None:
        """The identity, or ``None`` when none is configured."""
        row = await self._db.fetchone(_SELECT)
        return None if row is None else _from_row(row)

    async def get(self) -> Identity:
        identity = await self.find()
        if identity is None:
            raise NotFoundError("No identity configured")
        return identity

    async def exists(self) -> bool:
        return bool(await self._db.fetchval("SELECT 1 FROM identity WHERE id = 1"))

    async def update(self, **fields: Any) -> Identity:
        """Change the given fields (``None`` = leave unchanged) and bump ``updated_at``."""
        clean = _check_fields(fields)
        async with self._db.transaction():
            current = await self.get()
            if not clean:
                return current
            # Iterate the whitelist, not the caller's keys: only known column names reach SQL.
            columns = [(column, clean[key]) for key, column in FIELDS.items() if key in clean]
            assignments = ", ".join(f"{column} = ?" for column, _ in columns)
            params = [value for _, value in columns]
            await self._db.execute(
                f"UPDATE identity SET {assignments}, updated_at = ? WHERE id = 1",
                (*params, now_iso()),
            )
            return await self.get()

    async def set(self, **fields: Any) -> Identity:
        """Create the identity, or update it if one exists (upsert)."""
        clean = _check_fields(fields)
        async with self._db.transaction():
            if await self.exists():
                return await self.update(**clean)
            if "name" not in clean:
                raise ValidationError("identity name is required to create an identity")
            return await self.create(**clean)

