"""The bitemporal knowledge graph of one mind: entities, relations and the entity↔frame bridge.

"Active" means ``valid_to IS NULL``; retiring sets ``valid_to`` (and retires the entity's active
relations with it); entities are deleted only with what they came from (forgetting a frame
removes the entities nothing else mentions) or by the entity cleanup modes. Entity identity
is ``normalize_entity_name(name)`` + the folded type, so "Acme"/"ACME" and "Postgres"/"pg" are one
entity for :meth:`~KnowledgeGraph.upsert_entity`, lookups and dedupe. Types are stored folded.
Active relations are unique per ``(source, target, type)``: re-creating one returns it.
All SQL is fixed text with ``?`` parameters; nothing from a caller becomes SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mind.bounds import entity_input, name_text, relation_input
from mind.errors import NotFoundError, ValidationError
from mind.knowledge import graph
from mind.knowledge.graph import Direction, Relation
from mind.knowledge.normalizer import (
    Props,
    count_arg,
    dump_props,
    fold,
    like_pattern,
    load_props,
    mentions,
    normalize_entity_name,
    normalize_entity_type,
    props_arg,
    seen_count,
    text_arg,
)
from mind.storage.db import Database, Row
from mind.storage.sqlutil import chunked as chunks
from mind.storage.sqlutil import placeholders
from mind.timeutil import normalize_ts, now_iso
from vocabulary.limits import MAX_NAME_CHARS

__all__ = ["Entity", "KnowledgeGraph", "Relation"]

_E = "id, entity_type, name, normalized_name, properties, valid_from, valid_to, recorded_at"
ACTIVE_ENTITIES = "FROM knowledge_entities WHERE valid_to IS NULL"
_ACTIVE = ACTIVE_ENTITIES


@dataclass(slots=True)
class Entity:
    id: int
    entity_type: str
    name: str
    normalized_name: str
    properties: Props
    valid_from: str
    valid_to: str | None
    recorded_at: str

    @property
    def active(self) -> bool:
        return self.valid_to is None

    @classmethod
    def from_row(cls, row: Row) -> Entity:
        return cls(row["id"], row["entity_type"], row["name"], row["normalized_name"],
                   load_props(row["properties"]), row["valid_from"], row["valid_to"],
                   row["recorded_at"])


class KnowledgeGraph:
    """Entities, relations and the entity↔frame bridge of one mind (writes in transactions)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @property
    def db(self) -> Database:
        return self._db

    # -- entities ------------------------------------------------------------------------------

    async def _insert(self, etype: str, name: str, props: Props, start: str, end: str | None
                      ) -> Entity:
        row = await self._db.fetchone(
            "INSERT INTO knowledge_entities (entity_type, name, normalized_name, properties, "
            f"valid_from, valid_to, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING {_E}",
            (etype, name, normalize_entity_name(name), dump_props(props), start, end, now_iso()))
        return Entity.from_row(row)

    async def _save_props(self, entity_id: int, props: Props, name: str | None = None) -> Entity:
        row = await self._db.fetchone(
            "UPDATE knowledge_entities SET properties = ?, recorded_at = ?, "
            "name = coalesce(?, name), normalized_name = coalesce(?, normalized_name) "
            f"WHERE id = ? RETURNING {_E}",
            (dump_props(props), now_iso(), name, name and normalize_entity_name(name), entity_id))
        return Entity.from_row(row)

    async def create_entity(self, entity_type: str, name: str,
                            properties: Mapping[str, Any] | None = None, *,
                            valid_from: str | None = None, valid_to: str | None = None) -> Entity:
        """Insert a new entity (no dedupe: see :meth:`upsert_entity`)."""
        entity_input(entity_type, name, properties)
        etype, clean = normalize_entity_type(text_arg(entity_type, "entity type")), text_arg(
            name, "entity name")
        props = props_arg(properties)
        start = now_iso() if valid_from is None else normalize_ts(valid_from)
        end = None if valid_to is None else normalize_ts(valid_to)
        if end is not None and end <= start:
            raise ValidationError(f"valid_to {end} must be after valid_from {start}")
        async with self._db.transaction():
            return await self._insert(etype, clean, props, start, end)

    async def upsert_entity(self, entity_type: str, name: str,
                            properties: Mapping[str, Any] | None = None) -> tuple[Entity, bool]:
        """The active entity with this identity, updated (seen_count + 1, new properties win),
        or a new one. Returns ``(entity, created)``."""
        entity_input(entity_type, name, properties)
        etype = normalize_entity_type(text_arg(entity_type, "entity type"))
        clean, props = text_arg(name, "entity name"), props_arg(properties)
        async with self._db.transaction():
            found = await self.find_entity_by_name(clean, etype)
            if found is None:
                return await self._insert(etype, clean, props, now_iso(), None), True
            merged = {**found.properties, **props, "seen_count": seen_count(found.properties) + 1}
            return await self._save_props(found.id, merged), False

    async def get_entity(self, entity_id: int) -> Entity:
        """Any entity, active or retired; :class:`NotFoundError` if there is none."""
        row = await self._db.fetchone(f"SELECT {_E} FROM knowledge_entities WHERE id = ?",
                                      (entity_id,))
        if row is None:
            raise NotFoundError(f"entity {entity_id} not found")
        return Entity.from_row(row)

    async def update_entity(self, entity_id: int, *, name: str | None = None,
                            properties: Mapping[str, Any] | None = None) -> Entity:
        """Rename and/or replace the properties wholesale (validated); sets ``recorded_at``."""
        if name is not None:
            name_text(name, "entity name", MAX_NAME_CHARS)
        clean = None if name is None else text_arg(name, "entity name")
        async with self._db.transaction():
            entity = await self.get_entity(entity_id)
            props = entity.properties if properties is None else props_arg(properties)
            return await self._save_props(entity_id, props, clean)

    async def retire_entity(self, entity_id: int) -> Entity:
        """End the entity's validity now, and its active relations' (idempotent)."""
        async with self._db.transaction():
            if (await self.get_entity(entity_id)).active:
                now = now_iso()
                await self._db.execute(
                    "UPDATE knowledge_entities SET valid_to = ? WHERE id = ?", (now, entity_id))
                await self._db.execute(
                    "UPDATE knowledge_relations SET valid_to = ? WHERE valid_to IS NULL "
                    "AND (source_id = ? OR target_id = ?)", (now, entity_id, entity_id))
            return await self.get_entity(entity_id)

    async def _entities(self, where: str, params: tuple[Any, ...]) -> list[Entity]:
        rows = await self._db.fetchall(f"SELECT {_E} {_ACTIVE} {where}", params)
        return [Entity.from_row(row) for row in rows]

    async def search_entities(self, query: str, limit: int = 100,
                              entity_type: str | None = None) -> list[Entity]:
        """Active entities whose name or normalized name contains ``query`` (wildcards are
        literal; case-insensitive, alias aware); the type filter is part of the query."""
        typed = bool(entity_type and entity_type.strip())
        return await self._entities(
            "AND (name LIKE ?1 ESCAPE '\\' OR normalized_name LIKE ?2 ESCAPE '\\' "
            "OR normalized_name LIKE ?3 ESCAPE '\\') AND (?4 = 0 OR entity_type = ?5) "
            "ORDER BY name, id LIMIT ?6",
            (like_pattern(query), like_pattern(fold(query)),
             like_pattern(normalize_entity_name(query)), int(typed),
             normalize_entity_type(entity_type or ""), count_arg(limit, "limit")))

    async def find_entity_by_name(self, name: str, entity_type: str | None = None
                                  ) -> Entity | None:
        """The oldest active entity with this identity (case-insensitive, alias aware)."""
        typed = bool(entity_type and entity_type.strip())
        found = await self._entities(
            "AND normalized_name = ? AND (? = 0 OR entity_type = ?) ORDER BY id LIMIT 1",
            (normalize_entity_name(name), int(typed), normalize_entity_type(entity_type or "")))
        return found[0] if found else None

    async def get_entity_type_counts(self) -> dict[str, int]:
        rows = await self._db.fetchall(
            f"SELECT entity_type, COUNT(*) AS n {_ACTIVE} GROUP BY entity_type "
            "ORDER BY n DESC, entity_type")
        return {row["entity_type"]: int(row["n"]) for row in rows}

    async def get_entity_count(self) -> int:
        return int(await self._db.fetchval(f"SELECT COUNT(*) {_ACTIVE}", default=0))

    async def find_entities_in_text(self, text: str, limit: int = 12) -> list[Entity]:
        """Active entities named in ``text`` as whole words (≥ 2 chars), longest name first."""
        folded, limit = fold(text), count_arg(limit, "limit")
        if not folded or not limit:
            return []
        candidates = await self._entities(
            "AND length(name) >= 2 AND (instr(?1, normalized_name) > 0 "
            "OR instr(?1, lower(name)) > 0)", (folded,))
        hits = [e for e in candidates
                if mentions(folded, e.name) or mentions(folded, e.normalized_name)]
        hits.sort(key=lambda e: (-len(e.name), e.name, e.id))
        return hits[:limit]

    async def _many(self, ids: list[int]) -> list[Entity]:
        found: dict[int, Entity] = {}
        for part in chunks(ids):
            rows = await self._db.fetchall(
                f"SELECT {_E} FROM knowledge_entities WHERE id IN ({placeholders(len(part))})",
                list(part))
            found.update((row["id"], Entity.from_row(row)) for row in rows)
        return [found[i] for i in ids if i in found]

    # -- relations and bridge (see mind.knowledge.graph) -------------------------------------------

    async def create_relation(self, source_id: int, target_id: int, relation_type: str,
                              confidence: float = 1.0,
                              properties: Mapping[str, Any] | None = None) -> Relation:
        """A relation between two active entities; an identical active one is returned instead
        (confidence raised to the max, new properties merged in). Never from an entity to
        itself (:func:`mind.bounds.relation_input`)."""
        relation_input(source_id, target_id, relation_type, confidence, properties)
        return await graph.create_relation(self._db, source_id, target_id,
                                           relation_type, confidence, properties)

    async def get_relations_from(self, entity_id: int, relation_type: str | None = None
                                 ) -> list[Relation]:
        return await graph.get_relations(self._db, entity_id, relation_type, "out")

    async def get_relations_to(self, entity_id: int, relation_type: str | None = None
                               ) -> list[Relation]:
        return await graph.get_relations(self._db, entity_id, relation_type, "in")

    async def relation_history(self, entity_id: int, limit: int = 200) -> list[Relation]:
        """Every relation touching the entity, retired ones too, the latest valid first."""
        return await graph.relation_history(self._db, entity_id, limit)

    async def get_entities(self, ids: list[int]) -> list[Entity]:
        """These entities (active or retired; missing ids left out), in the order given."""
        return await self._many(ids)

    async def retire_relation(self, relation_id: int) -> Relation:
        return await graph.retire_relation(self._db, relation_id)

    async def link_entities_to_frames(self, pairs: Iterable[tuple[int, int]]) -> int:
        return await graph.link_entities_to_frames(self._db, pairs)

    async def link_entity_to_frame(self, entity_id: int, frame_id: int) -> bool:
        """Bridge one entity to one frame; False if the link already existed."""
        return await graph.link_entities_to_frames(self._db, [(entity_id, frame_id)]) == 1

    async def get_frame_entities(self, frame_id: int) -> list[Entity]:
        return await self._entities(
            "AND id IN (SELECT entity_id FROM kg_entity_frames WHERE frame_id = ?) "
            "ORDER BY name, id", (frame_id,))

    async def get_entity_frames(self, entity_id: int) -> list[int]:
        rows = await self._db.fetchall(
            "SELECT frame_id FROM kg_entity_frames WHERE entity_id = ? ORDER BY frame_id",
            (entity_id,))
        return [int(row["frame_id"]) for row in rows]

    # -- traversal (see mind.knowledge.graph) ------------------------------------------------------

    async def traverse(self, start_id: int, relation_type: str | None, max_depth: int,
                       direction: Direction = "out") -> list[Entity]:
        ids = await graph.traverse(self._db, start_id, relation_type, max_depth, direction)
        return await self._many(ids)

    async def bfs_distances(self, start_id: int, max_depth: int,
                            direction: Direction = "both") -> dict[int, int]:
        return await graph.bfs_distances(self._db, start_id, max_depth, direction)

    async def frame_distances_from_entities(self, seeds: Iterable[int], max_depth: int = 3
                                            ) -> dict[int, int]:
        return await graph.frame_distances_from_entities(self._db, seeds, max_depth)
