"""Compact float32 vectors for payloads, and the embedding model fingerprint.

A :class:`Vector` travels in JSON as **one string**: base64 of the little-endian float32 bytes
(384 dims → 2,048 characters instead of ~7,700 for a list of decimal floats, and bit-exact).
Validation accepts that string, a ``Vector``, raw little-endian float32 ``bytes`` (Python callers;
e.g. ``numpy_array.astype("<f4").tobytes()``) or a list of numbers, and checks that the vector is
non-empty, not longer than ``MAX_VECTOR_DIM`` and finite (no NaN/inf, also none produced by
float32 overflow). The *declared* dimension lives in the :class:`Fingerprint` of the batch
(``ApplyIndex`` checks every vector against it).
"""

from __future__ import annotations

import base64
import binascii
import math
import numbers
import sys
from array import array
from collections.abc import Iterable
from typing import Any, Final

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from queue_schemas.base import FrozenModel
from vocabulary.limits import MAX_ID_CHARS, MAX_LABEL_CHARS, MAX_VECTOR_DIM

_BIG_ENDIAN = sys.byteorder == "big"
# a little-endian float32 is NaN or infinite iff its 8 exponent bits are all set: the low 7
# bits of its fourth byte and the top bit of its third; these tables flag each byte's part
_EXP_HIGH: Final = bytes(int(b & 0x7F == 0x7F) for b in range(256))
_EXP_LOW: Final = bytes(b >> 7 for b in range(256))


def all_finite(blob: bytes) -> bool:
    """Whether no component of little-endian float32 ``blob`` is NaN or infinite, in C-speed
    byte operations (a 384-dim vector: 4.2 µs against 7.0 for a ``sum`` of its floats,
    bench/components/op_codec.py)."""
    high = blob[3::4].translate(_EXP_HIGH)
    low = blob[2::4].translate(_EXP_LOW)
    return not int.from_bytes(high, "little") & int.from_bytes(low, "little")


def _floats(blob: bytes) -> array[float]:
    values = array("f")
    values.frombytes(blob)
    if _BIG_ENDIAN:  # pragma: no cover - no big-endian CI
        values.byteswap()
    return values


class Vector:
    """An immutable float32 vector (``dim`` = number of components)."""

    __slots__ = ("_blob",)
    _blob: bytes

    def __init__(self, blob: bytes | bytearray | memoryview) -> None:
        """Wrap raw little-endian float32 bytes (validated)."""
        if not isinstance(blob, bytes | bytearray | memoryview):
            raise TypeError(f"Vector() takes float32 bytes, got {type(blob).__name__}")
        data = bytes(blob)
        if not data:
            raise ValueError("vector is empty")
        if len(data) % 4:
            raise ValueError(f"vector has {len(data)} bytes: not a whole number of float32s")
        if len(data) // 4 > MAX_VECTOR_DIM:
            raise ValueError(f"vector has {len(data) // 4} dims; the limit is {MAX_VECTOR_DIM}")
        if not all_finite(data):
            for i, x in enumerate(_floats(data)):
                if not math.isfinite(x):
                    raise ValueError(f"vector component {i} is {x} (vectors must be finite)")
        object.__setattr__(self, "_blob", data)

    # -- constructors --------------------------------------------------------------------
    @classmethod
    def from_floats(cls, values: Iterable[float]) -> Vector:
        items = list(values)
        if not all(type(x) is float for x in items):  # slow path: ints, numpy scalars, junk
            for i, x in enumerate(items):
                if isinstance(x, bool) or not isinstance(x, numbers.Real):
                    raise ValueError(f"vector component {i} is {x!r}, not a number")
            items = [float(x) for x in items]
        try:
            packed = array("f", items)
        except (OverflowError, TypeError) as exc:  # pragma: no cover - array saturates to inf
            raise ValueError(f"vector is not float32-representable: {exc}") from None
        if _BIG_ENDIAN:  # pragma: no cover
            packed.byteswap()
        return cls(packed.tobytes())

    @classmethod
    def from_bytes(cls, blob: bytes | bytearray | memoryview) -> Vector:
        """Raw little-endian float32 bytes (the sqlite-vec blob layout)."""
        return cls(blob)

    @classmethod
    def from_base64(cls, text: str) -> Vector:
        message = "vector is not valid base64 (expected base64 of little-endian float32 bytes)"
        try:
            raw = text.encode("ascii")
            blob = base64.b64decode(raw, validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise ValueError(message) from None
        if base64.b64encode(blob) != raw:  # stray padding or non-zero trailing bits
            raise ValueError(message + ": not canonical")
        return cls(blob)

    # -- views ---------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return len(self._blob) // 4

    def to_bytes(self) -> bytes:
        return self._blob

    def to_list(self) -> list[float]:
        return list(_floats(self._blob))

    def to_base64(self) -> str:
        return base64.b64encode(self._blob).decode("ascii")

    def __len__(self) -> int:
        return self.dim

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vector) and other._blob == self._blob

    def __hash__(self) -> int:
        return hash(self._blob)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Vector is immutable")

    def __repr__(self) -> str:
        head = ", ".join(f"{x:.4g}" for x in self.to_list()[:3])
        return f"Vector(dim={self.dim}, [{head}{', …' if self.dim > 3 else ''}])"

    # -- pydantic ------------------------------------------------------------------------
    @classmethod
    def _coerce(cls, value: Any) -> Vector:
        if isinstance(value, Vector):
            return value
        if isinstance(value, str):
            return cls.from_base64(value)
        if isinstance(value, bytes | bytearray | memoryview):
            return cls(value)
        if isinstance(value, list | tuple):
            return cls.from_floats(value)
        raise ValueError(
            f"a vector must be a base64 string of float32 bytes, got {type(value).__name__}"
        )

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls._coerce,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda v: v.to_base64(), when_used="json"
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "contentEncoding": "base64",
            "description": "little-endian float32 vector, base64-encoded",
        }


class Fingerprint(FrozenModel):
    """Which model made a set of vectors (stored in the mind's meta table)."""

    provider: str = Field(min_length=1, max_length=MAX_LABEL_CHARS)
    model: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    dim: int = Field(ge=1, le=MAX_VECTOR_DIM)
