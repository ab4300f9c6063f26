"""An in-memory ontology of entity types (engine-spec a.9) for validating extracted entities."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class TypeSchema:
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ValidationResult:
    valid: bool
    issues: tuple[str, ...] = ()


@dataclass
class Ontology:
    _types: dict[str, TypeSchema] = field(default_factory=dict)

    def define(
        self, entity_type: str, *, required: Iterable[str] = (), optional: Iterable[str] = ()
    ) -> None:
        self._types[entity_type] = TypeSchema(tuple(required), tuple(optional))

    def get_schema(self, entity_type: str) -> TypeSchema | None:
        return self._types.get(entity_type)

    def has_type(self, entity_type: str) -> bool:
        return entity_type in self._types

    def get_types(self) -> list[str]:
        return list(self._types)

    def validate_entity(self, entity_type: str, properties: Mapping[str, Any]) -> ValidationResult:
        """Check an entity against its type: unknown type, missing or unknown properties."""
        schema = self._types.get(entity_type)
        if schema is None:
            return ValidationResult(False, (f"Unknown entity type: {entity_type}",))
        issues = [f"Missing required property: {p}" for p in schema.required if p not in properties]
        allowed = set(schema.required) | set(schema.optional)
        issues += [f"Unknown property: {p}" for p in properties if p not in allowed]
        return ValidationResult(not issues, tuple(issues))
